"""Database helpers shared by fixtures."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import psycopg

from lore.core import hooklog

TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'"
SEQUENCES = "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
_EMPTYING: dict[str, str] = {}  # database URL -> the statement that empties it


def empty_schema(db_url: str) -> None:
    """Every table of lore's schema emptied and every sequence restarted (ids start at 1 again), in
    one round trip. DELETE rather than TRUNCATE: a test leaves a few rows, and TRUNCATE makes new
    files for every table and index (about 50 ms a test here, DELETE about 10). Foreign keys and
    triggers are skipped while it runs (session_replication_role), so the order does not matter."""
    with psycopg.connect(db_url, autocommit=True) as c:
        statement = _EMPTYING.get(db_url)
        if statement is None:
            tables = [r[0] for r in c.execute(TABLES)]
            sequences = [r[0] for r in c.execute(SEQUENCES)]
            statement = _EMPTYING[db_url] = " ".join(
                ["SET session_replication_role = replica;"]
                + [f"DELETE FROM {t};" for t in tables]
                + [f"ALTER SEQUENCE {s} RESTART;" for s in sequences]
                + ["SET session_replication_role = DEFAULT;"]
            )
        c.execute(statement)


def assert_client(conn: Any, source: str, expected: str) -> None:
    """A write's `source` is lore's id for the agent, and the name it gave is in the audit."""
    names = conn.execute("SELECT name, client FROM client_names").fetchall()
    assert source == expected, (source, names)
    assert any(client == expected for _, client in names), names


# What lore's hooks keep in a data dir: the spool, run markers, kept session-start texts, the prompt
# hook's state, and the hook log `lore doctor` reads (logs/hook.log).
HOOK_STATE = ("spool", "hooks", "session-start", "prompt-hook")


def forget_hook_state(data_dir: Path) -> None:
    """A worker's data dir as a test finds it: nothing an earlier test's hooks kept or logged (a
    failed run of another test's hook would read as this test's in `lore doctor`)."""
    for kept in HOOK_STATE:
        shutil.rmtree(data_dir / kept, ignore_errors=True)
    hooklog.path({"LORE_DATA_DIR": str(data_dir)}).unlink(missing_ok=True)
