"""Migrations under the advisory lock: two processes that find the same empty database and migrate it
at the same instant both succeed, and each migration is applied (and recorded) exactly once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import psycopg
import pytest

from lore.db import migrate

# Each process connects, says it is ready, waits for "go" on stdin, then migrates: the two upgrades
# start within a millisecond or so of each other, well inside the time one upgrade takes.
RACER = """
import sys
import psycopg
from lore.db import migrate
with psycopg.connect(sys.argv[1]) as conn:
    print("ready", flush=True)
    sys.stdin.readline()
    applied = migrate.upgrade(conn)
    conn.commit()
    print("applied=" + ",".join(map(str, applied)), flush=True)
"""


@pytest.fixture
def empty_db(db_url: str) -> Iterator[str]:
    name = "lore_migrate_race"
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    yield db_url.replace("/lore?", f"/{name}?")
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_two_processes_migrate_an_empty_database_at_once(empty_db: str) -> None:
    assert "/lore_migrate_race?" in empty_db
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, empty_db],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for racer in racers:
            assert racer.stdout is not None
            assert racer.stdout.readline() == "ready\n"
        for racer in racers:  # both released together
            assert racer.stdin is not None
            racer.stdin.write("go\n")
            racer.stdin.flush()
        outcomes = [racer.communicate(timeout=120) for racer in racers]
    finally:
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
    for racer, (_, err) in zip(racers, outcomes, strict=True):
        assert racer.returncode == 0, err
    versions = [m.version for m in migrate.available()]
    applied = sorted(out.strip().removeprefix("applied=") for out, _ in outcomes)
    # one of them applied every migration; the other waited for the lock and found nothing to do
    assert applied == ["", ",".join(map(str, versions))], outcomes
    with psycopg.connect(empty_db) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY version ORDER BY 1")
        assert rows.fetchall() == [(v, 1) for v in versions]
        assert migrate.current_version(conn) == versions[-1]
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
        assert tables is not None and tables[0] > 10
