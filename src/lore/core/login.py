"""The server this machine signed in to (`lore login URL`): one file in lore's config directory,
`login.json`, owner-only (0600, in a 0700 directory), written whole or not at all, never read through
a link or when anyone else could read it. Every command, hook and `lore install` of the machine use it;
`LORE_URL` / `LORE_TOKEN` in the environment still win (docs/design.md, Serving).

It holds the server's base URL, the user it signed in as, and a token: a personal token pasted at
`lore login` (`kind` "token"), or the OAuth pair the server's sign-in flow issued (`kind` "oauth": a
1-hour access token, a refresh token, when the access token expires and the token endpoint to refresh
it at). Standard library only, and cheap: the hooks read it on every run (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from lore.core.errors import Refused

NAME = "login.json"
MAX_BYTES = 16 * 1024
# An OAuth access token is refreshed when less than this many seconds of it are left.
REFRESH_MARGIN = 60.0


@dataclass(frozen=True)
class Login:
    url: str  # the server's base URL, without a trailing slash
    user: str
    token: str
    kind: str = "token"  # "token": a personal token; "oauth": the server's OAuth access token
    refresh_token: str | None = None
    expires_at: float | None = None  # the access token's, in seconds since the epoch
    client_id: str | None = None  # the OAuth client lore registered for this machine
    token_endpoint: str | None = None

    def stale(self, now: float) -> bool:
        """An OAuth access token that has (almost) run out and can be refreshed."""
        return (
            self.kind == "oauth"
            and self.refresh_token is not None
            and self.expires_at is not None
            and self.expires_at - now < REFRESH_MARGIN
        )

    def refreshed(self, token: str, refresh_token: str | None, expires_in: float, now: float) -> Login:
        return replace(
            self, token=token, refresh_token=refresh_token or self.refresh_token, expires_at=now + expires_in
        )


def config_dir(env: Mapping[str, str]) -> Path:
    """lore's config directory: `$XDG_CONFIG_HOME/lore`, else `~/.config/lore` (Linux and the other
    Unixes), the platform's own elsewhere. Never beside `$LORE_CONFIG`, which may lie in a repository
    (a token must not end up in a commit)."""
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        from platformdirs import user_config_dir

        return Path(user_config_dir("lore", appauthor=False))
    xdg = env.get("XDG_CONFIG_HOME", "").strip()
    base = Path(xdg) if xdg.startswith("/") else Path(env.get("HOME") or Path.home()) / ".config"
    return base / "lore"


def path(env: Mapping[str, str]) -> Path:
    return config_dir(env) / NAME


def read(env: Mapping[str, str]) -> Login | None:
    """The stored login, or None when there is none. Refused (Refused, with the fix) when the file is
    not a private regular file of this user, or not one lore wrote."""
    where = path(env)
    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _unusable(where, exc.strerror or "cannot open it") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise _unusable(where, "not a regular file of yours")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise _unusable(where, f"readable by others (mode {stat.S_IMODE(info.st_mode):o})")
        raw = handle.read(MAX_BYTES + 1)
    try:
        data = json.loads(raw) if len(raw) <= MAX_BYTES else None
        return _login(data) if isinstance(data, dict) else _fail(where)
    except (TypeError, ValueError):
        return _fail(where)


def _login(data: dict[str, object]) -> Login:
    fields = {k: data.get(k) for k in Login.__dataclass_fields__ if k in data}
    login = Login(**fields)  # type: ignore[arg-type]
    if not (isinstance(login.url, str) and login.url.startswith(("http://", "https://"))):
        raise ValueError("url")
    if not (isinstance(login.token, str) and login.token and isinstance(login.user, str)):
        raise ValueError("token")
    return login


def _fail(where: Path) -> Login:
    raise _unusable(where, "not a login lore wrote")


def _unusable(where: Path, why: str) -> Refused:
    return Refused(
        f"lore's login file {where} is unusable ({why}).",
        "Remove it (`lore logout`) and sign in again with `lore login URL`.",
    )


def write(env: Mapping[str, str], login: Login) -> Path:
    """Store `login` as the machine's: a new file made owner-only (mkstemp: O_EXCL, 0600, a random
    name, so no planted name or link is ever opened), synced, then renamed over the old one."""
    import tempfile

    where = path(env)
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temp = tempfile.mkstemp(dir=where.parent, prefix=".login.", suffix=".partial")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({k: v for k, v in asdict(login).items() if v is not None}, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, where)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return where


@contextmanager
def locked(env: Mapping[str, str]) -> Iterator[None]:
    """Held while an OAuth token is refreshed: the server rotates the refresh token, so a second
    process refreshing with the old one at the same time would be refused; it waits here, then finds
    the new pair in the file."""
    import fcntl

    where = path(env).with_name(".login.lock")
    where.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(where, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def remove(env: Mapping[str, str]) -> bool:
    """Forget the login; False when there was none."""
    try:
        path(env).unlink()
    except FileNotFoundError:
        return False
    return True


def origin(url: str) -> str:
    """scheme://host[:port] of `url`: never its user, password, path or query."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an address lore cannot read"
    return (
        f"{parts.scheme}://{parts.hostname}{port}"
        if parts.scheme and parts.hostname
        else "an unknown address"
    )
