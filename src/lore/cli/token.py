"""`lore token create USER [--expires WHEN] [--label L]`, `lore token list [--user U]`,
`lore token revoke ID | --user U`: sign-in tokens for `lore serve --sign-in`.

Run where the server's database is reachable (`LORE_DATABASE_URL`). `create` prints the token on
stdout and nothing else (so `export LORE_TOKEN=$(lore token create alice)` works); it is shown once.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import psycopg

from lore.core.config import load_config
from lore.core.errors import ConfigError, InvalidInput
from lore.db import connect, migrate
from lore.store import auth


def database() -> psycopg.Connection:
    """The server's database: LORE_DATABASE_URL, else the config's [database] url, else embedded."""
    try:
        url = load_config().database_url
    except ConfigError:
        url = None  # an admin host needs no lore config file
    conn = connect.connect(connect.target(url).url)
    migrate.upgrade(conn)
    return conn


def run(action: str, target: str | None, *, expires: str | None, label: str | None, user: str | None) -> int:
    with database() as conn:
        if action == "create":
            return create(conn, target, expires, label)
        if action == "list":
            return listing(conn, user or target)
        return revoke(conn, target, user)


def create(conn: psycopg.Connection, user: str | None, expires: str | None, label: str | None) -> int:
    if not user:
        raise InvalidInput(
            "lore token create needs a user name", "e.g. `lore token create alice --expires 90d`"
        )
    when = auth.parse_expiry(expires, datetime.now(UTC))
    if label is not None and not 1 <= len(label) <= 200:
        raise InvalidInput("--label must be 1-200 characters", "e.g. --label laptop")
    row, secret = auth.create(conn, user, expires_at=when, label=label)
    until = f"expires {row.expires_at.isoformat(timespec='minutes')}" if row.expires_at else "no expiry"
    print(f"token {row.id} for {row.user_name} ({until}); shown once, store it now:", file=sys.stderr)
    print(secret, flush=True)
    return 0


def listing(conn: psycopg.Connection, user: str | None) -> int:
    rows = auth.list_tokens(conn, user)
    if not rows:
        print("No tokens. `lore token create USER` makes one.")
        return 0
    now = datetime.now(UTC)
    print(f"{'id':>5}  {'user':<20} {'status':<8} {'created':<17} {'expires':<17} {'last used':<17} label")
    for t in rows:
        print(
            f"{t.id:>5}  {t.user_name:<20} {t.status(now):<8} {_when(t.created_at):<17} "
            f"{_when(t.expires_at):<17} {_when(t.last_used_at):<17} {t.label or ''}"
        )
    return 0


def revoke(conn: psycopg.Connection, target: str | None, user: str | None) -> int:
    if user:
        count = auth.revoke_user(conn, auth.check_user(user))
        print(f"Revoked {count} token(s) of {user}.")
        return 0
    if not target or not target.isdigit():
        raise InvalidInput(
            "lore token revoke needs a token id (or --user USER)", "`lore token list` shows ids"
        )
    row = auth.revoke(conn, int(target))
    print(f"Revoked token {row.id} of {row.user_name}; requests with it now get 401.")
    return 0


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%MZ") if value else "-"
