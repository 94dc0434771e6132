"""Versioned migrations: `migrations/NNNN_name.sql`, applied in order, once, in one transaction,
under an advisory lock so that concurrent lore processes never race on start."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import psycopg

# Arbitrary constant shared by every lore process: pg_advisory_xact_lock(LOCK_ID).
LOCK_ID = 0x10BE_0001


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def available() -> list[Migration]:
    found = []
    for entry in resources.files("lore.db").joinpath("migrations").iterdir():
        if entry.name.endswith(".sql"):
            number, _, rest = entry.name.partition("_")
            found.append(Migration(int(number), rest.removesuffix(".sql"), entry.read_text()))
    return sorted(found, key=lambda m: m.version)


def latest_version() -> int:
    return available()[-1].version


def current_version(conn: psycopg.Connection) -> int | None:
    """The applied schema version, or None when lore's schema is absent."""
    row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return None
    version = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(version[0]) if version and version[0] is not None else None


def upgrade(conn: psycopg.Connection) -> list[int]:
    """Apply every pending migration; returns the versions applied (empty when current)."""
    pending = available()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_ID,))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        applied = []
        for migration in pending:
            if migration.version in done:
                continue
            conn.execute(migration.sql.encode())
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
            applied.append(migration.version)
    return applied
