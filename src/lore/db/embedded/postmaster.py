"""The running postmaster as its files say: postmaster.pid (alive, ready, its socket), the lock files
a killed one leaves, the options it was started with, its log."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import overload

from lore.core.errors import DatabaseError


def read_postmaster(pgdata: Path) -> tuple[int, Path | None, str] | None:
    """(pid, socket dir, status) from postmaster.pid when that process is alive."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return None
    if len(lines) < 5:
        return None
    try:
        pid = int(lines[0])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return None
    except PermissionError:
        pass  # alive, owned by another user
    if _zombie(pid):  # killed, not yet reaped (an init that reaps late): as good as gone
        return None
    socket_dir = Path(lines[4].strip()) if lines[4].strip() else None
    status = lines[7].strip() if len(lines) > 7 else ""
    return pid, socket_dir, status


def clear_dead_locks(*locks: Path) -> None:
    """After a kill -9, the lock files (postmaster.pid, the socket's .lock) name a postmaster that is
    dead but not yet reaped (a zombie: an init that reaps late, as in a container). PostgreSQL takes
    a zombie for a live postmaster and refuses to start ("lock file already exists"). A lock file
    naming a zombie is stale: removed. (PostgreSQL's other interlock stays: it refuses to start while
    a backend of the old postmaster still holds its shared memory.)"""
    for lock in locks:
        try:
            pid = int(lock.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            continue
        if _zombie(pid):
            with contextlib.suppress(OSError):
                lock.unlink()


def _zombie(pid: int) -> bool:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS), or gone
    return stat_line.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def started_safely(pgdata: Path) -> bool:
    """Whether the running server was started with lore's options (an older lore did not pass them)."""
    try:
        opts = (pgdata / "postmaster.opts").read_text()
    except OSError:
        return False
    return '"-h" ""' in opts and '"unix_socket_permissions=0700"' in opts


@overload
def wait_postmaster(pgdata: Path, timeout: float) -> Path: ...
@overload
def wait_postmaster(pgdata: Path, timeout: float, *, gone_after: float) -> Path | None: ...
def wait_postmaster(pgdata: Path, timeout: float, *, gone_after: float | None = None) -> Path | None:
    """The socket dir once the postmaster is ready. With `gone_after`: None when no live postmaster
    has been there for that long (one that was dying when it was found)."""
    deadline = time.monotonic() + timeout
    missing_since: float | None = None
    while time.monotonic() < deadline:
        info = read_postmaster(pgdata)
        if info is not None and info[2] == "ready" and info[1] is not None:
            return info[1]
        if info is None and gone_after is not None:
            missing_since = missing_since or time.monotonic()
            if time.monotonic() - missing_since >= gone_after:
                return None
        elif info is not None:
            missing_since = None
        time.sleep(0.05)
    raise DatabaseError(
        "The embedded PostgreSQL started but never became ready.",
        "See postgres.log in the data dir; `lore db stop` then `lore db start` to retry.",
    )


def log_tail(log: Path, lines: int = 5) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
