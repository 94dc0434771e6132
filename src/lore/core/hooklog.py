"""The hook log: one line per run, so a memory that silently never arrived is visible in
`lore doctor`. Lines hold the client, the outcome and a reason; never the environment or input."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path

from lore.core.paths import log_dir
from lore.core.redact import redact

_MAX_BYTES = 512 * 1024


class Entry:
    """One line of the hook log. (A plain class: `dataclasses` costs the hook 5 ms to import.)"""

    __slots__ = ("at", "client", "detail", "event", "ok")

    def __init__(self, at: str, client: str, event: str, ok: bool, detail: str) -> None:
        self.at, self.client, self.event, self.ok, self.detail = at, client, event, ok, detail

    def __repr__(self) -> str:
        return f"Entry({self.at!r}, {self.client!r}, {self.event!r}, {self.ok!r}, {self.detail!r})"


def path(env: Mapping[str, str] | None = None) -> Path:
    return log_dir(env) / "hook.log"


def append(client: str, event: str, ok: bool, detail: str, env: Mapping[str, str] | None = None) -> None:
    """Best effort: a hook must never fail because its log could not be written.

    The log is its user's alone: the file 0600 (an older, wider one is narrowed), the folder 0700
    when lore creates it, and it is never written through a link (O_NOFOLLOW)."""
    try:
        target = path(env)
        _make_private_dirs(target.parent)
        info = target.lstat() if os.path.lexists(target) else None
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_size > _MAX_BYTES:
            _rotate(target)
        line = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "client": client,
            "event": event,
            "ok": ok,
            "detail": redact(detail)[:500],
        }
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(target, flags, 0o600)
        with os.fdopen(fd, "a") as handle:
            if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
                os.fchmod(fd, 0o600)
            handle.write(json.dumps(line) + "\n")
    except OSError:
        pass


def _make_private_dirs(folder: Path) -> None:
    """Create `folder` and any missing parent as 0700 (an existing one is left as it is)."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for each in reversed(missing):
        each.mkdir(mode=0o700, exist_ok=True)


def _rotate(target: Path) -> None:
    """Keep the last 500 lines, written to a fresh 0600 file that replaces the log."""
    import tempfile  # rarely needed: not on every hook's import path

    lines = target.read_text(errors="replace").splitlines()[-500:]
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".hook.log.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write("\n".join(lines) + "\n")
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def entries(env: Mapping[str, str] | None = None) -> list[Entry]:
    try:
        raw = path(env).read_text(errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for line in raw:
        try:
            d = json.loads(line)
            out.append(Entry(d["at"], d["client"], d["event"], bool(d["ok"]), d["detail"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out
