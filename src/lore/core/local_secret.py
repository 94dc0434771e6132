"""The local secret: what a local `lore serve` (no sign-in, loopback only) asks of every `/api` and
`/mcp` request, so that another OS user of the machine, who can reach loopback too, cannot read or
write this user's memory through it (the embedded database already admits only its owner).

One per data directory (`<data dir>/local-token`): made on first use with 43 random url-safe
characters after `lore_` (the shape of a sign-in token, which the secret scanner refuses to store),
readable by its owner only (0600, created exclusively, never through a link). A request carries it
as `Authorization: Bearer <secret>`; `lore token local` prints it, and `lore run` prints the line that
connects Claude Code with it. Standard library only.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from lore.core.errors import Refused
from lore.core.paths import data_dir

NAME = "local-token"
PREFIX = "lore_"


def path(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / NAME


def read_or_create(env: Mapping[str, str] | None = None) -> str:
    """This user's local secret, made now if there is none. Refused when the file is not a regular
    file of this user that nobody else can read (a planted or loosened file is never trusted)."""
    where = path(env)
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read(where)
    value = PREFIX + secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as handle:
        handle.write(value + "\n")
    return value


def _read(where: Path) -> str:
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise Refused(
            f"Cannot read the local secret {where}: {exc.strerror}.",
            f"Remove {where} (a new one is made on the next start) and connect your agents again.",
        ) from None
    with os.fdopen(fd, "r") as handle:
        info = os.fstat(handle.fileno())
        loose = stat.S_IMODE(info.st_mode) & 0o077
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or loose:
            raise Refused(
                f"The local secret {where} is not a private file of yours (owner, mode or type).",
                f"Remove {where} (a new one is made on the next start) and connect your agents again.",
            )
        value = handle.read(256).strip()
    if not value.startswith(PREFIX) or len(value) < 40:
        raise Refused(
            f"The local secret {where} is not one lore made.",
            f"Remove {where} (a new one is made on the next start) and connect your agents again.",
        )
    return value


def matches(authorization: str | None, secret: str) -> bool:
    """Whether an `Authorization` header carries the secret (compared in constant time)."""
    if not authorization:
        return False
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), secret.encode())
