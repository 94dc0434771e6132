"""Hook runs its agent killed: each hook leaves a marker while it runs (`<data dir>/hooks/running/`)
and removes it when it ends, however it ends. A marker whose process is gone is a run that never
ended: its agent stopped it (a hook timeout shorter than lore's deadline, the agent quitting). The
next hook finds it, records it (outcome `killed`) and removes it; `lore doctor` names such runs.

Standard library only (no dataclasses), a few system calls: every hook pays for it, the fast path
included.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from pathlib import Path

from lore.core.paths import data_dir

# A marker this old is a run that never ended, even when its process id is alive again (reused).
STALE_SECONDS = 600.0
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


class Run:
    __slots__ = ("client", "event", "pid", "started")

    def __init__(self, event: str, client: str, pid: int, started: float) -> None:
        self.event, self.client, self.pid, self.started = event, client, pid, started  # started: epoch s


def folder(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "hooks" / "running"


def begin(env: Mapping[str, str] | None, event: str, client: str) -> Path | None:
    """Leave this run's marker; its path, or None when it cannot be written (never fails a hook)."""
    name = f"{_safe(event)}.{_safe(client)}.{os.getpid()}.{time.time_ns()}"
    where = folder(env)
    try:
        try:
            fd = os.open(
                where / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
        except FileNotFoundError:
            for each in (where.parent.parent, where.parent, where):
                if not os.path.lexists(each):
                    os.mkdir(each, 0o700)
            fd = os.open(
                where / name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
            )
        os.close(fd)
    except OSError:
        return None
    return where / name


def end(marker: Path | None) -> None:
    if marker is not None:
        with contextlib.suppress(OSError):
            os.unlink(marker)


def abandoned(env: Mapping[str, str] | None = None, *, take: bool = True) -> list[Run]:
    """Runs that started and never ended (their process is gone, or the marker is older than
    STALE_SECONDS), oldest first; with `take`, their markers are removed (each is reported once)."""
    where = folder(env)
    try:
        names = os.listdir(where)
    except OSError:
        return []
    now = time.time()
    found = []
    for name in names:
        parts = name.split(".")
        if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
            continue
        run = Run(parts[0], parts[1], int(parts[2]), int(parts[3]) / 1e9)
        if run.pid == os.getpid() or (_alive(run.pid) and now - run.started < STALE_SECONDS):
            continue
        if take:
            try:
                os.unlink(where / name)
            except OSError:
                continue  # another hook took it first
        found.append(run)
    return sorted(found, key=lambda r: r.started)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _safe(value: str) -> str:
    cleaned = "".join(ch for ch in value.lower() if ch in _SAFE)[:40]
    return cleaned or "unknown"
