"""Users and their sign-in tokens (docs/design.md, Serving): created by `lore token create USER`,
stored hashed.

A token is `lore_` + 43 url-safe characters (256 random bits). Only its SHA-256 is stored: a
high-entropy secret needs no slow hash, and a digest lookup cannot be turned into a timing oracle
for the secret (the digest is compared again in constant time all the same). A token is valid while
it is neither revoked nor past `expires_at`. The same table holds the access and refresh tokens that
the OAuth flow issues (`kind`), so revoking and expiring work alike for all of them.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lore.core.errors import NotFound
from lore.core.users import (
    PREFIX as PREFIX,
)
from lore.core.users import (
    USER_RE as USER_RE,
)
from lore.core.users import (
    Principal as Principal,
)
from lore.core.users import (
    Token as Token,
)
from lore.core.users import (
    check_user as check_user,
)
from lore.core.users import (
    digest as digest,
)
from lore.core.users import (
    looks_like_token as looks_like_token,
)
from lore.core.users import (
    new_secret as new_secret,
)
from lore.core.users import (
    parse_expiry as parse_expiry,
)

# How often `last_used_at` is written for a token in steady use (one UPDATE per token per minute).
_TOUCH_EVERY = "1 minute"
_COLUMNS = "id, user_name, kind, label, created_at, expires_at, revoked_at, last_used_at"


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


# --- web UI sessions: child rows of the personal token a person signed in with ----------------------

_FIND = """
SELECT s.user_name, s.expires_at FROM tokens s
WHERE s.hash = %s AND s.kind = 'access' AND s.client_id = %s AND s.revoked_at IS NULL
  AND s.expires_at > now()
  AND (s.parent_id IS NULL OR EXISTS (
        SELECT 1 FROM tokens p WHERE p.id = s.parent_id AND p.revoked_at IS NULL
          AND (p.expires_at IS NULL OR p.expires_at > now())))
"""
# Ended sessions are of no use after a day: removed when their user signs in again.
_PRUNE = """
DELETE FROM tokens WHERE user_name = %s AND kind = 'access' AND client_id = %s
  AND (expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day')
"""


def add_web_session(
    conn: psycopg.Connection, user: str, secret: str, client_id: str, parent_id: int, until: datetime
) -> None:
    with conn.transaction():
        conn.execute(_PRUNE, (user, client_id))
        conn.execute(
            """INSERT INTO tokens (user_name, kind, hash, label, client_id, parent_id, expires_at)
               VALUES (%s, 'access', %s, 'web session', %s, %s, %s)""",
            (user, digest(secret), client_id, parent_id, until),
        )


def find_web_session(conn: psycopg.Connection, secret: str, client_id: str) -> tuple[str, datetime] | None:
    """(user, expiry) of a live web session."""
    row = conn.execute(_FIND, (digest(secret), client_id)).fetchone()
    return (row[0], row[1]) if row else None


def end_web_session(conn: psycopg.Connection, secret: str, client_id: str) -> None:
    with conn.transaction():
        conn.execute(
            "UPDATE tokens SET revoked_at = now() WHERE hash = %s AND kind = 'access' "
            "AND client_id = %s AND revoked_at IS NULL",
            (digest(secret), client_id),
        )
