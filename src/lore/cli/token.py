"""`lore token create USER [--expires WHEN] [--label L]`, `lore token list [--user U]`,
`lore token revoke ID | --user U`: sign-in tokens for `lore serve --sign-in`.

Run where the server's database is reachable (`LORE_DATABASE_URL`). `create` prints the token on
stdout and nothing else (so `export LORE_TOKEN=$(lore token create alice)` works); it is shown once.
"""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime

from lore.cli.context import runtime
from lore.core import local_secret
from lore.core.errors import InvalidInput
from lore.service import accounts
from lore.service.runtime import Runtime


def run(action: str, target: str | None, *, expires: str | None, label: str | None, user: str | None) -> int:
    """On the server's database: LORE_DATABASE_URL, else the config's [database] url, else embedded
    (an admin host needs no lore config file)."""
    if action == "local":
        print(local_secret.read_or_create(os.environ))
        return 0
    with runtime(config_optional=True) as rt:
        if action == "create":
            return create(rt, target, expires, label)
        if action == "list":
            return listing(rt, user or target)
        return revoke(rt, target, user)


def create(rt: Runtime, user: str | None, expires: str | None, label: str | None) -> int:
    row, secret = accounts.create_token(rt, user, expires=expires, label=label)
    until = f"expires {row.expires_at.isoformat(timespec='minutes')}" if row.expires_at else "no expiry"
    print(f"token {row.id} for {row.user_name} ({until}); shown once, store it now:", file=sys.stderr)
    print(secret, flush=True)
    return 0


def listing(rt: Runtime, user: str | None) -> int:
    rows = accounts.tokens(rt, user)
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


def revoke(rt: Runtime, target: str | None, user: str | None) -> int:
    if user:
        count = accounts.revoke_user(rt, user)
        print(f"Revoked {count} token(s) of {user}.")
        return 0
    if not target or not target.isdigit():
        raise InvalidInput(
            "lore token revoke needs a token id (or --user USER)", "`lore token list` shows ids"
        )
    row = accounts.revoke_token(rt, int(target))
    print(f"Revoked token {row.id} of {row.user_name}; requests with it now get 401.")
    return 0


def _when(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%MZ") if value else "-"
