"""Users and their sign-in tokens (docs/design.md, Serving): created by `lore token create USER`,
stored hashed.

A token is `lore_` + 43 url-safe characters (256 random bits). Only its SHA-256 is stored: a
high-entropy secret needs no slow hash, and a digest lookup cannot be turned into a timing oracle
for the secret (the digest is compared again in constant time all the same). A token is valid while
it is neither revoked nor past `expires_at`. The same table holds the access and refresh tokens that
the OAuth flow issues (`kind`), so revoking and expiring work alike for all of them.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.rows import class_row

from lore.core.errors import InvalidInput, NotFound

PREFIX = "lore_"
_SECRET_RE = re.compile(r"lore_[A-Za-z0-9_-]{43}")
USER_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
_DURATION_RE = re.compile(r"(\d+)\s*(m|min|h|d|w|y)", re.IGNORECASE)
_UNITS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400, "y": 365 * 86400}
# How often `last_used_at` is written for a token in steady use (one UPDATE per token per minute).
_TOUCH_EVERY = "1 minute"


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


_COLUMNS = "id, user_name, kind, label, created_at, expires_at, revoked_at, last_used_at"


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


def create(
    conn: psycopg.Connection,
    user: str,
    *,
    expires_at: datetime | None = None,
    label: str | None = None,
    kind: str = "personal",
    client_id: str | None = None,
    parent_id: int | None = None,
) -> tuple[Token, str]:
    """A new token for `user` (created on first use); returns the row and the secret, shown once."""
    check_user(user)
    secret = new_secret()
    with conn.transaction(), conn.cursor(row_factory=class_row(Token)) as cur:
        cur.execute("INSERT INTO users (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (user,))
        cur.execute(
            f"""INSERT INTO tokens (user_name, kind, hash, label, client_id, parent_id, expires_at)
                VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}""",
            (user, kind, digest(secret), label, client_id, parent_id, expires_at),
        )
        row = cur.fetchone()
    assert row is not None
    return row, secret


def list_tokens(
    conn: psycopg.Connection, user: str | None = None, *, kinds: Sequence[str] = ("personal",)
) -> list[Token]:
    with conn.cursor(row_factory=class_row(Token)) as cur:
        cur.execute(
            f"""SELECT {_COLUMNS} FROM tokens
                WHERE (%(user)s::text IS NULL OR user_name = %(user)s) AND kind = ANY(%(kinds)s)
                ORDER BY user_name, created_at, id""",
            {"user": user, "kinds": list(kinds)},
        )
        return cur.fetchall()


def revoke(conn: psycopg.Connection, token_id: int) -> Token:
    """Revoke one token and every OAuth token issued from it. Revoking twice is not an error."""
    with conn.transaction(), conn.cursor(row_factory=class_row(Token)) as cur:
        cur.execute(
            f"""UPDATE tokens SET revoked_at = coalesce(revoked_at, now())
                WHERE id = %s RETURNING {_COLUMNS}""",
            (token_id,),
        )
        row = cur.fetchone()
        if row is None:
            raise NotFound(f"no token with id {token_id}", "`lore token list` shows the ids")
        cur.execute(
            """WITH RECURSIVE issued AS (
                   SELECT id FROM tokens WHERE parent_id = %s
                   UNION SELECT t.id FROM tokens t JOIN issued ON t.parent_id = issued.id)
               UPDATE tokens SET revoked_at = now()
               WHERE id IN (SELECT id FROM issued) AND revoked_at IS NULL""",
            (token_id,),
        )
    return row


def revoke_user(conn: psycopg.Connection, user: str) -> int:
    """Revoke every token of `user`; returns how many were still valid."""
    with conn.transaction():
        cur = conn.execute(
            "UPDATE tokens SET revoked_at = now() WHERE user_name = %s AND revoked_at IS NULL", (user,)
        )
        return cur.rowcount


def grant_expiry(conn: psycopg.Connection, token_id: int) -> tuple[bool, datetime | None]:
    """(whether personal token `token_id` is live, when it expires): what OAuth tokens issued from
    it may not outlive."""
    row = conn.execute(_GRANT, (token_id,)).fetchone()
    return (row is not None, row[0] if row else None)


_GRANT = (
    "SELECT expires_at FROM tokens WHERE id = %s AND kind = 'personal' AND revoked_at IS NULL "
    "AND (expires_at IS NULL OR expires_at > now())"
)


def verify(
    conn: psycopg.Connection, secret: str, *, kinds: Sequence[str] = ("personal", "access")
) -> Principal | None:
    """The principal a valid token signs in, or None (unknown, revoked or expired: all alike).
    May write `last_used_at`: the caller commits (a pool connection does on release)."""
    if not looks_like_token(secret):
        return None
    wanted = digest(secret)
    row = conn.execute(
        """SELECT id, user_name, kind, hash, expires_at, last_used_at IS NULL
                  OR last_used_at < now() - %s::interval, client_id, parent_id
           FROM tokens
           WHERE hash = %s AND kind = ANY(%s) AND revoked_at IS NULL
             AND (expires_at IS NULL OR expires_at > now())""",
        (_TOUCH_EVERY, wanted, list(kinds)),
    ).fetchone()
    if row is None or not hmac.compare_digest(bytes(row[3]), wanted):
        return None
    if row[5]:
        conn.execute("UPDATE tokens SET last_used_at = now() WHERE id = %s", (row[0],))
    return Principal(row[1], int(row[0]), row[2], row[4], row[6], row[7])
