"""Users, their tokens and their namespaced spaces, pure: what a token looks like (and its digest),
a user name, an expiry, and a signed-in user's config with every space id `<user>/<space>`.

In sign-in mode the space ids a session works with are `<user>/<space>`: `scope` rewrites every id
of the user's config (spaces, `reads_from`, `accepts_from`, `default_space`). All domain code filters
by space id and takes readable/writable ids only from the session's config, so user A cannot even
name a space of user B: `bob/work` is simply not among A's spaces (not found), and B's bare id
`work` is A's own `alice/work`. A user who never pushed a config gets the starter: one space,
`personal`, as the default. The tables are lore.store.auth and lore.store.userconfig.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from lore.core.config import Config, SpaceConfig, foreign, parse_config
from lore.core.errors import InvalidInput

PREFIX = "lore_"
_SECRET_RE = re.compile(r"lore_[A-Za-z0-9_-]{43}")
USER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
_DURATION_RE = re.compile(r"(\d+)\s*(m|min|h|d|w|y)", re.IGNORECASE)
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}


@dataclass(frozen=True)
class Token:
    id: int
    user_name: str
    kind: str
    label: str | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None
    last_used_at: datetime | None

    def status(self, now: datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"


@dataclass(frozen=True)
class Principal:
    """Who a valid token signs in: the user, and which token (sessions are bound to it)."""

    user: str
    token_id: int
    kind: str
    expires_at: datetime | None
    client_id: str | None = None  # the OAuth client an access or refresh token was issued to
    parent_id: int | None = None  # the token it was issued from


def new_secret() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def looks_like_token(secret: str) -> bool:
    return _SECRET_RE.fullmatch(secret) is not None


def check_user(name: str) -> str:
    if not USER_RE.fullmatch(name or ""):
        raise InvalidInput(
            f"invalid user name {name!r}",
            'use 1-64 letters, digits, "_", ".", "@" or "-", starting with a letter or digit (e.g. alice)',
        )
    return name


def parse_expiry(text: str | None, now: datetime) -> datetime | None:
    """`30d`, `12h`, `90min`, `2w`, `1y`, or an ISO date/time; `never` (or nothing) means no expiry."""
    if text is None or text.strip().lower() in ("", "never", "none"):
        return None
    value = text.strip()
    if m := _DURATION_RE.fullmatch(value):
        seconds = int(m.group(1)) * _UNITS[m.group(2).lower()]
        if seconds <= 0:
            raise InvalidInput(f"--expires {value} is not in the future", "use e.g. 30d, 12h or 2027-01-31")
        return now + timedelta(seconds=seconds)
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InvalidInput(
            f"cannot read --expires {value!r}", "use a duration (90min, 12h, 30d, 2w, 1y), a date, or never"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if when <= now:
        raise InvalidInput(
            f"--expires {value} is in the past", "give a later date, or a duration such as 30d"
        )
    return when


SEP = "/"
STARTER = 'default_space = "personal"\n\n[[space]]\nid = "personal"\npaths = []\n'
MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class UserConfig:
    user: str
    config: Config  # ids scoped: `<user>/<space>`
    home: str
    version: int  # 0: never pushed (the starter config)
    updated_at: datetime | None
    ignored: tuple[str, ...] = ()  # settings of the file that have no meaning on a server

    def env(self) -> dict[str, str]:
        """The environment spaces are resolved with: the user's HOME, and never a LORE_SPACE."""
        return {"HOME": self.home} if self.home else {}


def scoped(user: str, space: str) -> str:
    return f"{user}{SEP}{space}"


def local_name(user: str, space: str) -> str:
    """`alice/work` -> `work` for alice; anything else is returned as it is."""
    return space.removeprefix(f"{user}{SEP}")


def scope(config: Config, user: str) -> Config:
    """The same config with every space id prefixed by `<user>/` (pure)."""

    def ids(values: tuple[str, ...]) -> tuple[str, ...]:
        # Another user's space (`bob/work`) stays as written: lore.core.links keeps it only while
        # that user's config names this space back.
        return tuple(v if foreign(v) else scoped(user, v) for v in values)

    spaces = tuple(
        SpaceConfig(
            id=scoped(user, s.id),
            paths=s.paths,
            remotes=s.remotes,
            reads_from=ids(s.reads_from),
            accepts_from=ids(s.accepts_from),
        )
        for s in config.spaces
    )
    default = scoped(user, config.default_space) if config.default_space else None
    return replace(config, spaces=spaces, default_space=default, database_url=None)


def label(user: str) -> Path:
    """What error messages call a pushed config (there is no file on the server)."""
    return Path(f"the config of user {user} (update it with `lore config push`)")


def parse(text: str, user: str, home: str) -> UserConfig:
    """Validate a config file's text exactly as `lore` validates a local one; raises ConfigError."""
    check_user(user)
    if len(text.encode()) > MAX_BYTES:
        raise InvalidInput(
            f"the config is larger than {MAX_BYTES // 1024} KiB", "push the lore config file only"
        )
    if not home.startswith("/") and not (len(home) > 2 and home[1] == ":"):
        raise InvalidInput(
            f"home {home!r} is not an absolute path", "push from the machine the config is for"
        )
    config = parse_config(text, label(user))
    ignored = ("[database] url (the server uses its own database)",) if config.database_url else ()
    return UserConfig(user, scope(config, user), home, 0, None, ignored)
