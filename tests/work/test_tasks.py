"""Tasks against the real database: own backlog, another space's inbox, refusal, status changes."""

from __future__ import annotations

import psycopg
import pytest

from lore.core import inbox
from lore.core.errors import NotFound, Refused
from lore.store import notes, tasks

from .conftest import Spaces


def test_own_backlog_is_todo(spaces: Spaces, conn: psycopg.Connection) -> None:
    task = tasks.file(
        conn, spaces.config, spaces.origin("alpha", "claude-code"), "alpha", "Write docs", "the README"
    )
    assert (task.space, task.status, task.from_space, task.from_source) == (
        "alpha",
        "todo",
        "alpha",
        "claude-code",
    )
    assert task.id.startswith("n_")
    # it is a note of kind task: searchable like any other note, and not embedded on the write path
    row = conn.execute(
        "SELECT kind, title, embedding FROM notes WHERE lineage = %s", (task.lineage,)
    ).fetchone()
    assert row == ("task", "Write docs", None)
    found = conn.execute(
        "SELECT lineage FROM notes WHERE kind = 'task' AND tsv @@ plainto_tsquery('english', 'README')"
    ).fetchall()
    assert found == [(task.lineage,)]


def test_filed_into_another_space_lands_in_its_inbox_with_the_sender(
    spaces: Spaces, conn: psycopg.Connection
) -> None:
    first = tasks.file(
        conn, spaces.config, spaces.origin("beta", "codex"), "alpha", "Fix CI", "red since Monday"
    )
    second = tasks.file(
        conn, spaces.config, spaces.origin("beta", "codex"), "alpha", "Fix CI", "red since Monday"
    )
    assert first.lineage != second.lineage  # never merged silently
    assert (first.space, first.status, first.from_space, first.from_source) == (
        "alpha",
        "inbox",
        "beta",
        "codex",
    )
    assert first.from_workspace == str(spaces.dirs["beta"])
    listed, total = tasks.listing(conn, "alpha")
    assert total == 2 and {t.status for t in listed} == {"inbox"}
    assert tasks.listing(conn, "beta") == ([], 0)


def test_update_records_history_and_respects_spaces(spaces: Spaces, conn: psycopg.Connection) -> None:
    task = tasks.file(conn, spaces.config, spaces.origin("beta"), "alpha", "Fix CI", "red")
    before, after = tasks.update(
        conn, spaces.origin("alpha", "cursor"), ["alpha"], task.lineage, "doing", "on it"
    )
    assert (before, after.status) == ("inbox", "doing")
    events = tasks.history(conn, ["alpha"], task.lineage)
    assert [(e.status, e.note, e.space, e.source) for e in events] == [
        ("inbox", None, "beta", "test"),
        ("doing", "on it", "alpha", "cursor"),
    ]
    # the sender cannot see it any more (it is alpha's); a reader of alpha cannot change it
    with pytest.raises(NotFound):
        tasks.update(conn, spaces.origin("beta"), ["beta"], task.lineage, "done")
    with pytest.raises(Refused):
        tasks.update(conn, spaces.origin("gamma"), ["gamma", "alpha"], task.lineage, "done")
    assert tasks.get(conn, ["alpha"], task.lineage).status == "doing"


def test_a_task_note_from_remember_note_is_todo_until_updated(
    spaces: Spaces, conn: psycopg.Connection
) -> None:
    note = notes.remember(conn, spaces.origin("alpha"), "migrate to pg 18", kind="task", title="Upgrade")
    assert tasks.get(conn, ["alpha"], note.lineage).status == "todo"
    before, after = tasks.update(conn, spaces.origin("alpha"), ["alpha"], note.lineage, "blocked", "waiting")
    assert (before, after.status) == ("todo", "blocked")
    plain = notes.remember(conn, spaces.origin("alpha"), "not a task")
    with pytest.raises(NotFound):
        tasks.update(conn, spaces.origin("alpha"), ["alpha"], plain.lineage, "done")


def test_listing_order_statuses_and_counts(spaces: Spaces, conn: psycopg.Connection) -> None:
    o = spaces.origin("alpha")
    ids = {s: tasks.file(conn, spaces.config, o, "alpha", s, s).lineage for s in ("a", "b", "c", "d")}
    tasks.update(conn, o, ["alpha"], ids["b"], "doing")
    tasks.update(conn, o, ["alpha"], ids["c"], "done")
    tasks.file(conn, spaces.config, spaces.origin("beta"), "alpha", "from beta", "x")
    rows, total = tasks.listing(conn, "alpha")
    assert [t.status for t in rows] == ["inbox", "doing", "todo", "todo"] and total == 4
    assert tasks.counts(conn, "alpha") == {"inbox": 1, "doing": 1, "todo": 2, "done": 1}
    everything, n = tasks.listing(conn, "alpha", inbox.STATUSES)
    assert n == 5 and everything[-1].status == "done"


def test_the_database_refuses_a_task_row_without_its_note(spaces: Spaces, conn: psycopg.Connection) -> None:
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        conn.execute(
            "INSERT INTO tasks (lineage, space, status, from_space, from_source) "
            "VALUES (999, 'alpha', 'todo', 'alpha', 't')"
        )
    conn.rollback()
