"""The hook (psql, no driver) and `facts.page` (psycopg) read facts through the same SQL
functions; over random histories they must return the same rows, in the same order, and the
same totals and inbox counts as independent SQL written here."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from support.psqlread import psql_snapshot

from lore.core import render
from lore.core.session_start import Request
from lore.store import facts

SPACES = ["alpha", "beta", "gamma"]
SUBJECTS = [None, None, "acme-api", "ACME-API", "other", "infra"]


def _random_history(conn: psycopg.Connection, rng: random.Random) -> None:
    """Facts written straight into the table (so the expected values do not depend on lore's
    write path): revisions close the previous version, forgets close it for good, validity
    intervals in the past, present and future."""
    now = datetime.now(UTC)
    for lineage in range(1, rng.randint(30, 90) + 1):
        space = rng.choice(SPACES)
        subject = rng.choice(SUBJECTS)
        recorded = now - timedelta(minutes=rng.randint(10, 10_000))
        start = now - timedelta(days=rng.randint(0, 30)) if rng.random() < 0.85 else now + timedelta(days=2)
        end = None
        if rng.random() < 0.25:
            end = start + timedelta(days=rng.choice([1, 60]))
        versions = rng.choice([1, 1, 1, 2, 3])
        for v in range(versions):
            closed = recorded + timedelta(minutes=v + 1) if v < versions - 1 else None
            if v == versions - 1 and rng.random() < 0.15:
                closed = recorded + timedelta(minutes=v + 1)  # forgotten
            # a version that brought back an earlier statement (a tidy undo) keeps its time
            stated = recorded - timedelta(minutes=rng.randint(1, 10_000)) if rng.random() < 0.2 else None
            conn.execute(
                "INSERT INTO facts (lineage, space, statement, subject, valid_from, valid_to, recorded_at,"
                " superseded_at, stated_at, source) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, 'test')",
                (
                    lineage,
                    space,
                    f"fact {lineage} v{v}",
                    subject,
                    start,
                    end,
                    recorded + timedelta(minutes=v),
                    closed,
                    stated,
                ),
            )
    conn.commit()


def _expected(conn: psycopg.Connection, spaces: list[str], prefer: str) -> list[int]:
    """The rule written out independently: current, valid now, in `spaces`; preferred subject
    first, then no subject, then the rest; newest first by the fact's own time (stated_at, else
    recorded_at), larger lineage on a tie."""
    rows = conn.execute(
        "SELECT lineage, subject, coalesce(stated_at, recorded_at) FROM facts"
        " WHERE space = ANY(%s) AND superseded_at IS NULL"
        " AND valid_from <= now() AND (valid_to IS NULL OR valid_to > now())",
        (spaces,),
    ).fetchall()

    def group(subject: str | None) -> int:
        if subject is not None and subject.lower() == prefer.lower():
            return 0
        return 1 if subject is None else 2

    rows.sort(key=lambda r: (group(r[1]), -r[2].timestamp(), -r[0]))
    return [r[0] for r in rows]


def _wanted(spaces: list[str], workspace: str) -> Request:
    """A session start in the first of `spaces`, reading them all: no handoff, no instructions."""
    return Request(
        tuple(spaces), workspace, render.SESSION_START_MAX_FACTS, spaces[0], "/nowhere", 0, 3, None, 8
    )


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_hook_read_and_facts_query_agree_on_random_histories(
    conn: psycopg.Connection, db_url: str, seed: int
) -> None:
    rng = random.Random(seed)
    _random_history(conn, rng)
    for _ in range(4):
        spaces = rng.sample(SPACES, rng.randint(1, 3))
        workspace = rng.choice(["acme-api", "Acme-Api", "infra", "nothing"])
        expected = _expected(conn, spaces, workspace)
        snap = psql_snapshot(db_url, _wanted(spaces, workspace), timeout=10)
        through_psycopg, total = facts.page(
            conn, spaces, prefer_subject=workspace, limit=render.SESSION_START_MAX_FACTS
        )
        assert [f.lineage for f in snap.facts] == expected
        assert [f.lineage for f in through_psycopg] == expected
        assert snap.total == len(expected) == total


def test_inbox_counts_agree_with_the_rows(conn: psycopg.Connection, db_url: str) -> None:
    """Inbox tasks whose note is forgotten do not count; read messages do not count."""
    for lineage, forgotten in ((1, False), (2, True), (3, False)):
        conn.execute(
            "INSERT INTO notes (lineage, space, kind, title, body, source, superseded_at)"
            " VALUES (%s, 'alpha', 'task', %s, 'b', 'test', %s)",
            (lineage, f"task {lineage}", datetime.now(UTC) if forgotten else None),
        )
        conn.execute(
            "INSERT INTO tasks (lineage, space, status, from_space, from_source)"
            " VALUES (%s, 'alpha', 'inbox', 'beta', 't')",
            (lineage,),
        )
    conn.execute("UPDATE tasks SET status = 'todo' WHERE lineage = 3")
    for read in (None, datetime.now(UTC), None):
        conn.execute(
            "INSERT INTO messages (thread, to_space, from_space, body, source, read_at, read_by)"
            " VALUES (1, 'alpha', 'beta', 'hi', 'test', %s, %s)",
            (read, None if read is None else "reader"),
        )
    conn.commit()
    snap = psql_snapshot(db_url, _wanted(["alpha"], "x"), timeout=10)
    assert (snap.inbox, snap.unread) == (1, 2)
    assert conn.execute("SELECT inbox, unread FROM lore_inbox_counts('alpha')").fetchone() == (1, 2)
