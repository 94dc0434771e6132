"""Trust round 4, item 7: what a write is told when the database fails under it. A full disk (SQLSTATE
53100) was reported as a lost connection; a write whose connection was lost (the answer to its COMMIT
may never come) was told only "Retry", though it may have landed. The real server raises the errors:
a trigger raises SQLSTATE 53100 as PostgreSQL does when it cannot extend a file, another ends its own
backend mid-write."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from reliability.conftest import Project


@pytest.fixture
def failing_facts(conn: psycopg.Connection) -> Iterator[psycopg.Connection]:
    yield conn
    conn.rollback()
    conn.execute("DROP TRIGGER IF EXISTS fail_insert ON facts")
    conn.execute("DROP FUNCTION IF EXISTS lore_test_fail()")
    conn.commit()


def _trigger(conn: psycopg.Connection, body: str) -> None:
    conn.execute(
        f"CREATE FUNCTION lore_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body} END $$"
    )
    conn.execute(
        "CREATE TRIGGER fail_insert BEFORE INSERT ON facts FOR EACH ROW EXECUTE FUNCTION lore_test_fail()"
    )
    conn.commit()


def test_a_full_disk_is_reported_as_such_with_the_next_action(
    project: Project, failing_facts: psycopg.Connection
) -> None:
    _trigger(failing_facts, "RAISE EXCEPTION 'could not extend file' USING ERRCODE = '53100';")
    done = project.lore("facts", "add", "deploys with make ship")
    assert done.returncode == 1
    assert "disk is full (SQLSTATE 53100): nothing was written" in done.stderr, done.stderr
    assert "Free space on the disk" in done.stderr and "Lost the connection" not in done.stderr
    assert failing_facts.execute("SELECT count(*) FROM facts").fetchone() == (0,)


def test_a_lost_connection_during_a_write_says_it_may_have_landed_and_how_to_check(
    project: Project, failing_facts: psycopg.Connection
) -> None:
    _trigger(failing_facts, "PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW;")
    done = project.lore("facts", "add", "deploys with make ship")
    assert done.returncode == 1 and "Lost the connection to PostgreSQL" in done.stderr, done.stderr
    assert "may have been saved" in done.stderr and "`lore facts list`" in done.stderr, done.stderr
    assert "write it again only if it is missing" in done.stderr  # in the terminal's terms (advice.for_cli)
