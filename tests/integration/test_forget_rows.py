"""Forgetting closes belief; it never deletes. Checked on the rows themselves, with SQL: the version is
still there with `superseded_at` set (no later than the forget, never before it was recorded), nothing
else about it changed, and forget_log holds who forgot what, when and why."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
import pytest

from lore.core.admission import NoteCandidate
from lore.core.errors import NotFound
from lore.core.session import Acting, Origin
from lore.service.memory import revise_note_in
from lore.store import facts, notes

ORIGIN = Origin("s", "agent-x", "/w/s")
FROM = datetime(2026, 1, 5, tzinfo=UTC)
TO = datetime(2026, 6, 30, tzinfo=UTC)


def _clock(conn: psycopg.Connection) -> datetime:
    row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    conn.commit()
    now: datetime = row[0]
    return now


def test_forgetting_a_fact_closes_its_version_and_writes_the_audit(conn: psycopg.Connection) -> None:
    fact = facts.remember(
        conn, ORIGIN, "deploys with make ship", subject="acme", valid_from=FROM, valid_to=TO
    )
    before = _clock(conn)
    facts.forget(conn, ORIGIN, ["s"], fact.lineage, "moved to make release")
    after = _clock(conn)
    rows = conn.execute(
        "SELECT version_id, space, statement, subject, valid_from, valid_to, recorded_at, source, workspace, "
        "superseded_at FROM facts WHERE lineage = %s",
        (fact.lineage,),
    ).fetchall()
    assert len(rows) == 1, "forget must keep the row (close it), not delete it"
    *kept, closed = rows[0]
    assert kept == [
        fact.version_id,
        "s",
        "deploys with make ship",
        "acme",
        FROM,
        TO,
        fact.recorded_at,
        "agent-x",
        "/w/s",
    ]
    assert closed is not None and before <= closed <= after and closed >= fact.recorded_at
    audit = conn.execute(
        "SELECT space, item_kind, lineage, reason, source, workspace, at FROM forget_log"
    ).fetchall()
    assert len(audit) == 1
    assert audit[0][:6] == ("s", "fact", fact.lineage, "moved to make release", "agent-x", "/w/s")
    assert before <= audit[0][6] <= after
    with pytest.raises(NotFound):  # already forgotten: nothing current to forget
        facts.forget(conn, ORIGIN, ["s"], fact.lineage, "again")
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM forget_log").fetchone() == (1,)


def test_forgetting_a_note_closes_its_current_version_and_writes_the_audit(conn: psycopg.Connection) -> None:
    first = notes.remember(
        conn, ORIGIN, "cache for 5 minutes", kind="decision", title="Caching", tags=["perf"]
    )
    edit = NoteCandidate("cache for 10 minutes", "decision", "Caching", ("perf",))
    _, second = revise_note_in(conn, Acting(ORIGIN, ("s",)), first.lineage, edit)
    revised_at = conn.execute(
        "SELECT superseded_at FROM notes WHERE version_id = %s", (first.version_id,)
    ).fetchone()
    conn.commit()
    before = _clock(conn)
    notes.forget(conn, ORIGIN, ["s"], first.lineage, "obsolete")
    after = _clock(conn)
    rows = conn.execute(
        "SELECT version_id, kind, title, body, tags, recorded_at, superseded_at FROM notes "
        "WHERE lineage = %s ORDER BY version_id",
        (first.lineage,),
    ).fetchall()
    assert len(rows) == 2, "forget must keep both versions (close the current one), not delete it"
    assert rows[0] == (
        first.version_id,
        "decision",
        "Caching",
        "cache for 5 minutes",
        ["perf"],
        first.recorded_at,
        revised_at[0] if revised_at else None,
    )
    assert rows[1][:6] == (
        second.version_id,
        "decision",
        "Caching",
        "cache for 10 minutes",
        ["perf"],
        second.recorded_at,
    )
    closed = rows[1][6]
    assert closed is not None and before <= closed <= after and closed >= second.recorded_at
    audit = conn.execute(
        "SELECT space, item_kind, lineage, reason, source, workspace, at FROM forget_log"
    ).fetchall()
    assert len(audit) == 1
    assert audit[0][:6] == ("s", "note", first.lineage, "obsolete", "agent-x", "/w/s")
    assert before <= audit[0][6] <= after
    assert conn.execute("SELECT count(*) FROM notes WHERE superseded_at IS NULL").fetchone() == (0,)
