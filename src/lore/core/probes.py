"""What a session start looked at on this machine's disk, so a text composed once can be shown again
only while the disk says the same (docs/design.md, Agent events, "Speed"): the config file, the
workspace's git files, the paths that facts name. While `recording()` is active, the readers that
matter (lore.core.workspace, lore.core.stale, the config loader) note each probe and its answer;
`still(probes)` asks them again. Standard library only, a system call per probe: the hook's fast path
runs it."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

Probe = tuple[str, str, object]  # (kind, path, answer)
_active: list[Probe] | None = None


@contextmanager
def recording() -> Iterator[list[Probe]]:
    global _active
    previous, _active = _active, []
    try:
        yield _active
    finally:
        _active = previous


def note(kind: str, path: str, answer: object) -> None:
    """One probe and its answer, when recording (else nothing)."""
    if _active is not None:
        _active.append((kind, path, answer))


def look(kind: str, path: str) -> None:
    """Ask a probe and note its answer, when recording; else nothing (not even the system call)."""
    if _active is not None:
        _active.append((kind, path, ask(kind, path)))


def ask(kind: str, path: str) -> object:
    """The answer to a probe now: `exists` (lexists), `isdir`, `mode` (the file type, None when
    missing), `stat` ((mtime_ns, ctime_ns, size, inode), None when missing: a rewrite within one mtime
    tick still moves ctime), `realpath`."""
    if kind == "exists":
        return os.path.lexists(path)
    if kind == "isdir":
        return os.path.isdir(path)
    if kind == "realpath":
        return os.path.realpath(path)
    try:
        info = os.stat(path)
    except OSError:
        return None
    if kind == "mode":
        return info.st_mode & 0o170000
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]


def still(probes: Sequence[Sequence[object]]) -> bool:
    """Whether every probe answers as it did."""
    return all(ask(str(kind), str(path)) == answer for kind, path, answer in probes)
