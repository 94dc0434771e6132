"""Reading a file that a user, a client or a repository names: only a regular file, never waited on
and never read past a limit. A FIFO as the config file froze `lore which`, and `/dev/zero` grew a
session-start hook to 23 GB (the hook's deadline cannot interrupt one `read()`); opening a device node
at all can act on the device (a tape rewinds), so the file's type is checked before it is opened for
reading. Standard library only: the hooks import it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a directory",
}


class NotRegular(OSError):
    """The path names something other than a regular file (through links): `kind` says what."""

    def __init__(self, path: Path | str, kind: str) -> None:
        super().__init__(f"{path} is {kind}, not a regular file")
        self.kind = kind


class TooLarge(OSError):
    """The file holds more than the reader's limit."""

    def __init__(self, path: Path | str, limit: int) -> None:
        super().__init__(f"{path} is larger than {limit:,} bytes")
        self.limit = limit


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def open_regular(path: Path | str) -> int:
    """A descriptor open for reading on the regular file `path` names (links followed). Where the
    system has O_PATH (Linux) the file is looked at through a descriptor that does not open it, and
    reopened only once it is known to be regular: a FIFO or a device is never opened. Raises
    NotRegular, or the OSError of the lookup (FileNotFoundError, PermissionError, ...)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    o_path = getattr(os, "O_PATH", 0)
    if o_path:
        probe = os.open(path, o_path | getattr(os, "O_CLOEXEC", 0))
        try:
            before = os.fstat(probe)
            if not stat.S_ISREG(before.st_mode):
                raise NotRegular(path, _kind(before.st_mode))
            try:
                fd = os.open(f"/proc/self/fd/{probe}", flags)  # the same file, whatever `path` is now
            except FileNotFoundError:  # no /proc: the path once more (a swap in between is caught below)
                fd = os.open(path, flags)
        finally:
            os.close(probe)
    else:
        before = os.stat(path)
        if not stat.S_ISREG(before.st_mode):
            raise NotRegular(path, _kind(before.st_mode))
        fd = os.open(path, flags)
    after = os.fstat(fd)
    if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        os.close(fd)
        raise NotRegular(path, _kind(after.st_mode) if not stat.S_ISREG(after.st_mode) else "a file swapped")
    return fd


def read_regular(path: Path | str, limit: int) -> bytes:
    """The whole content of the regular file `path`, at most `limit` bytes (TooLarge past it)."""
    fd = open_regular(path)
    try:
        if os.fstat(fd).st_size > limit:
            raise TooLarge(path, limit)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit:  # it grew while it was read
        raise TooLarge(path, limit)
    return b"".join(chunks)
