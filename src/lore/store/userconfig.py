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

from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import psycopg

from lore.core.config import Config, SpaceConfig, parse_config
from lore.core.errors import InvalidInput
from lore.store.auth import check_user

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
        return tuple(scoped(user, v) for v in values)

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
