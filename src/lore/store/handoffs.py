"""Handoffs from psycopg (docs/design.md, Handoffs): what the CLI (`lore handoff`) and the web UI's
timeline read. A handoff is written by one use case only, the session end (lore.service.events:
lore_handoff_record, through psql or psycopg)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lore.core.rows import Handoff as Handoff

_COLUMNS = (
    "id, space, client, session_id, root, workspace, workspace_name, event, message, message_chars, "
    "changes, changed, diffstat, tasks, note, events, started_at, updated_at"
)


def last(conn: psycopg.Connection, space: str, root: str, max_age_hours: int | None) -> Handoff | None:
    """The last handoff here (`root`, in `space`) within `max_age_hours` (None: any age; 0: none),
    whose note is not forgotten: what the session-start hook reads too."""
    if max_age_hours == 0:
        return None
    with conn.cursor(row_factory=class_row(Handoff)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM lore_handoff_last(%s, %s, make_interval(hours => %s::int))",
            (space, root, max_age_hours),
        )
        return cur.fetchone()


def recent(conn: psycopg.Connection, spaces: Sequence[str], *, limit: int = 100) -> list[Handoff]:
    """Handoffs of `spaces`, the most recently updated first (the web UI's timeline)."""
    with conn.cursor(row_factory=class_row(Handoff)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM handoffs WHERE space = ANY(%s) "
            "ORDER BY updated_at DESC, id DESC LIMIT %s",
            (list(spaces), limit),
        )
        return cur.fetchall()


def notes_of(conn: psycopg.Connection, spaces: Sequence[str], ids: Sequence[int]) -> dict[int, int]:
    """The note of each handoff of `ids` in `spaces` that has one: the handoff's public id is its
    note's (`n_<note>`), whatever refers to the handoff by its row."""
    rows = conn.execute(
        "SELECT id, note FROM handoffs WHERE id = ANY(%s) AND space = ANY(%s) AND note IS NOT NULL",
        (list(ids), list(spaces)),
    ).fetchall()
    return {int(row_id): int(note) for row_id, note in rows}


def task_titles(conn: psycopg.Connection, space: str, lineages: Sequence[int]) -> dict[int, tuple[str, str]]:
    """lineage -> (status, title) of the tasks a handoff names, as they are now."""
    rows = conn.execute(
        """SELECT n.lineage, coalesce(t.status, 'todo'), coalesce(n.title, '') FROM notes n
           LEFT JOIN tasks t ON t.lineage = n.lineage
           WHERE n.lineage = ANY(%s) AND n.space = %s AND n.superseded_at IS NULL AND n.kind = 'task'""",
        (list(lineages), space),
    ).fetchall()
    return {int(r[0]): (r[1], r[2]) for r in rows}


def now(conn: psycopg.Connection) -> datetime:
    row = conn.execute("SELECT now()").fetchone()
    assert row is not None
    return row[0]  # type: ignore[no-any-return]
