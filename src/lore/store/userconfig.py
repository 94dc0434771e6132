"""A signed-in user's config, kept in the database (`lore config push`), and their namespaced spaces.

In sign-in mode the space ids a session works with are `<user>/<space>`: `scope` rewrites every id
of the user's config (spaces, `reads_from`, `accepts_from`, `default_space`). All domain code filters
by space id and takes readable/writable ids only from the session's config, so user A cannot even
name a space of user B: `bob/work` is simply not among A's spaces (not found), and B's bare id
`work` is A's own `alice/work`. A user who never pushed a config gets the starter: one space,
`personal`, as the default.

The `~` in a pushed config stands for the HOME of the machine it was pushed from (stored with it):
the workspaces that sessions announce are paths on the user's machine, not on the server.
"""

from __future__ import annotations

from dataclasses import replace

import psycopg

from lore.core.config import parse_config
from lore.core.users import (
    STARTER,
    label,
    scope,
)
from lore.core.users import (
    UserConfig as UserConfig,
)
from lore.core.users import (
    local_name as local_name,
)
from lore.core.users import (
    parse as parse,
)
from lore.core.users import (
    scoped as scoped,
)


def push(conn: psycopg.Connection, user: str, text: str, home: str) -> UserConfig:
    """Validate and store `text` as `user`'s config (the user is created if new)."""
    parsed = parse(text, user, home)
    with conn.transaction():
        conn.execute("INSERT INTO users (name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (user,))
        row = conn.execute(
            """INSERT INTO user_configs (user_name, toml, home) VALUES (%s, %s, %s)
               ON CONFLICT (user_name) DO UPDATE
                   SET toml = excluded.toml, home = excluded.home,
                       version = user_configs.version + 1, updated_at = now()
               RETURNING version, updated_at""",
            (user, text, home),
        ).fetchone()
    assert row is not None
    return replace(parsed, version=int(row[0]), updated_at=row[1])


def load(conn: psycopg.Connection, user: str) -> UserConfig:
    """The user's stored config, or the starter when they never pushed one."""
    row = conn.execute(
        "SELECT toml, home, version, updated_at FROM user_configs WHERE user_name = %s", (user,)
    ).fetchone()
    if row is None:
        return UserConfig(user, scope(parse_config(STARTER, label(user)), user), "", 0, None)
    parsed = parse(row[0], user, row[1])
    return replace(parsed, version=int(row[2]), updated_at=row[3])


def version(conn: psycopg.Connection, user: str) -> int:
    row = conn.execute("SELECT version FROM user_configs WHERE user_name = %s", (user,)).fetchone()
    return int(row[0]) if row else 0
