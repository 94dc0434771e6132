"""Month six, round 2 (issue 40, item 4): a tidy undo put the fact it brought back at the top of time.
After a merge and its undo, the restored fact counted as the newest: the next session was told that the
correct fact "may be contradicted by newer" the old one, and the Tidy page chose the wrong fact to
keep. An undo (and a redo) now puts each fact back in its place on both time axes (its own time,
Fact.stated, and its valid time), whatever was revised in between."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from support.runtime import one_space

from lore.core import tidy as shown
from lore.service import memory, tidy
from lore.service.runtime import Runtime
from lore.service.session_start import session_start


@pytest.fixture
def rt(tmp_path: Path, lore_env: dict[str, str]) -> Iterator[Runtime]:
    with one_space(tmp_path, lore_env) as runtime:
        yield runtime


def recall_ids(rt: Runtime) -> list[str]:
    return [f.id for f in memory.recall(rt, rt.command_session(None)).facts]


def fact_lines(rt: Runtime) -> list[str]:
    text = session_start(rt, rt.command_session(None), "claude-code", via="cli").text
    return [line for line in text.splitlines() if line.startswith("- ")]


def test_undo_and_redo_put_facts_back_in_their_place(rt: Runtime, conn: psycopg.Connection) -> None:
    who = rt.command_session(None)
    old = memory.remember_fact(rt, who, "The dev server listens on port 8080", subject="app").item
    right = memory.remember_fact(rt, who, "The dev server listens on port 9000", subject="app").item
    other = memory.remember_fact(rt, who, "Run the dev server with make dev", subject="app").item
    assert recall_ids(rt) == [other.id, right.id, old.id]
    before = fact_lines(rt)
    assert any(f"{old.id} " in line and f"may be contradicted by newer {right.id}" in line for line in before)

    merged = tidy.merge(rt, who, other.id, [old.id], statement="Start the dev server with make dev")
    undone = tidy.undo(rt, who, merged.action)
    assert f"{old.id} is current again" in undone.text
    # Back in its place: the order, the conflict mark and its valid time are as before the merge.
    assert recall_ids(rt) == [other.id, right.id, old.id]
    assert fact_lines(rt) == before
    again = memory.current_facts(rt, who.readable, [old.lineage])[old.lineage]
    assert (
        again.stated == old.stated
        and again.valid_from == old.valid_from
        and again.recorded_at > old.recorded_at
    )

    # The Tidy page keeps the newer: the conflict lists the correct fact first.
    report = tidy.report(rt, "w", check_paths=False)
    assert [(c.newer.id, c.older.id) for c in report.conflicts] == [(right.id, old.id)]

    # Redo, a revision in between, and the undo of the redo.
    redone = tidy.redo(rt, who, merged.action)
    assert "Redid tidy action" in redone.text
    assert recall_ids(rt) == [other.id, right.id]
    memory.revise_fact(rt, who, right.id, statement="The dev server listens on port 9001")
    assert recall_ids(rt) == [right.id, other.id]
    tidy.undo(rt, who, redone.action)
    assert recall_ids(rt) == [right.id, other.id, old.id]
    statements = {f.id: f.statement for f in memory.recall(rt, who).facts}
    assert statements[other.id] == "Run the dev server with make dev"  # the merge's revision reverted
    lines = fact_lines(rt)
    assert any(f"{old.id} " in line and f"may be contradicted by newer {right.id}" in line for line in lines)


def test_the_tidy_page_keeps_the_newest_of_near_duplicates_after_an_undo(rt: Runtime) -> None:
    who = rt.command_session(None)
    first = memory.remember_fact(rt, who, "The API listens on port 8080", subject="app").item
    newest = memory.remember_fact(rt, who, "The API server listens on port 8080", subject="app").item
    unrelated = memory.remember_fact(rt, who, "Deploys run from GitHub Actions", subject="app").item
    done = tidy.merge(rt, who, unrelated.id, [first.id])
    tidy.undo(rt, who, done.action)
    report = tidy.report(rt, "w", check_paths=False)
    assert [[e.id for e in c.items] for c in report.duplicates] == [[newest.id, first.id]]
    assert "the first is the newest" in shown.text(report)
