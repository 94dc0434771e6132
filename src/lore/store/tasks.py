"""Tasks: notes of kind `task` with a status (inbox, todo, doing, blocked, done). Public id `n_<lineage>`.

The text lives in `notes` (searchable like any note; embedded later, never here). The workflow
state lives in `tasks`, changed in place, with every change in `task_events`. A task filed into
another space lands there as `inbox`, with the sender's space, client and workspace recorded, and
is never merged into an existing one. A note of kind `task` written with remember_note has no
`tasks` row yet: it counts as `todo` until update_task gives it one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lore.core import secrets
from lore.core.config import Config
from lore.core.errors import NotFound, Refused
from lore.core.inbox import OPEN_STATUSES, check_target
from lore.core.rows import Task as Task
from lore.core.session import Origin


@dataclass(frozen=True)
class Event:
    status: str
    note: str | None
    space: str
    source: str
    workspace: str | None
    at: datetime


_SELECT = """
SELECT n.lineage, n.space, coalesce(t.status, 'todo') AS status, n.title, n.body,
       coalesce(t.from_space, n.space) AS from_space, coalesce(t.from_source, n.source) AS from_source,
       coalesce(t.from_workspace, n.workspace) AS from_workspace,
       coalesce(t.filed_at, n.recorded_at) AS filed_at, coalesce(t.updated_at, n.recorded_at) AS updated_at
FROM notes n LEFT JOIN tasks t ON t.lineage = n.lineage
WHERE n.kind = 'task' AND n.superseded_at IS NULL
"""
_ORDER = """
ORDER BY array_position(%(order)s::text[], coalesce(t.status, 'todo')), n.lineage DESC
"""


def file(
    conn: psycopg.Connection,
    config: Config,
    origin: Origin,
    target: str,
    title: str | None,
    body: str,
    *,
    allow_secret: bool = False,
) -> Task:
    """Write the task note into `target` and its state: `todo` at home, `inbox` elsewhere. Refused
    unless `target` is the filer's own space or its `accepts_from` lists the filer's space."""
    check_target(config, origin.space, target)
    secrets.refuse(("title", title), ("body", body), what="task", allow=allow_secret)
    status = "todo" if target == origin.space else "inbox"
    with conn.transaction():
        row = conn.execute(
            """INSERT INTO notes (lineage, space, kind, title, body, source, workspace, client_name)
               VALUES (nextval('note_lineage_seq'), %s, 'task', %s, %s, %s, %s, %s) RETURNING lineage""",
            (target, title, body, origin.source, origin.workspace, origin.client_name),
        ).fetchone()
        assert row is not None
        conn.execute(
            """INSERT INTO tasks (lineage, space, status, from_space, from_source, from_workspace,
                                  from_client_name)
               VALUES (%s, %s, %s, %s, %s, %s, %s)""",
            (row[0], target, status, origin.space, origin.source, origin.workspace, origin.client_name),
        )
        _event(conn, row[0], status, None, origin)
        return _get(conn, [target], row[0])


def update(
    conn: psycopg.Connection,
    origin: Origin,
    readable: Sequence[str],
    lineage: int,
    status: str,
    note: str | None = None,
) -> tuple[str, Task]:
    """Set the status of a task of this session's space; returns (previous status, task)."""
    secrets.refuse(("note", note), what="status note")
    with conn.transaction():
        current = _get(conn, readable, lineage, lock=True)
        if current.space != origin.space:
            raise Refused(
                f"{current.id} belongs to space {current.space!r}, which this session may read, not change.",
                f"Update it from a workspace of {current.space!r}.",
            )
        conn.execute(
            """INSERT INTO tasks (lineage, space, status, from_space, from_source, from_workspace, filed_at)
               VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (lineage) DO NOTHING""",
            (
                lineage,
                current.space,
                current.status,
                current.from_space,
                current.from_source,
                current.from_workspace,
                current.filed_at,
            ),
        )
        conn.execute("UPDATE tasks SET status = %s, updated_at = now() WHERE lineage = %s", (status, lineage))
        _event(conn, lineage, status, note, origin)
        return current.status, _get(conn, readable, lineage)


def get(conn: psycopg.Connection, readable: Sequence[str], lineage: int) -> Task:
    return _get(conn, readable, lineage)


def listing(
    conn: psycopg.Connection, space: str, statuses: Sequence[str] = OPEN_STATUSES, *, limit: int = 200
) -> tuple[list[Task], int]:
    """Tasks of one space with those statuses, in the order of `statuses`, newest first; and how many."""
    params = {"space": space, "statuses": list(statuses), "order": list(statuses), "limit": limit}
    where = " AND n.space = %(space)s AND coalesce(t.status, 'todo') = ANY(%(statuses)s::text[])"
    with conn.cursor(row_factory=class_row(Task)) as cur:
        cur.execute(_SELECT + where + _ORDER + " LIMIT %(limit)s", params)
        rows = cur.fetchall()
    count = conn.execute(f"SELECT count(*) FROM ({_SELECT}{where}) AS open_tasks", params).fetchone()
    return rows, int(count[0]) if count else len(rows)


def counts(conn: psycopg.Connection, space: str) -> dict[str, int]:
    """How many tasks of each status a space has."""
    rows = conn.execute(
        f"SELECT status, count(*) FROM ({_SELECT} AND n.space = %(space)s) AS all_tasks GROUP BY status",
        {"space": space},
    ).fetchall()
    return {status: int(n) for status, n in rows}


def history(conn: psycopg.Connection, readable: Sequence[str], lineage: int) -> list[Event]:
    _get(conn, readable, lineage)
    with conn.cursor(row_factory=class_row(Event)) as cur:
        cur.execute(
            "SELECT status, note, space, source, workspace, at FROM task_events "
            "WHERE lineage = %s ORDER BY id",
            (lineage,),
        )
        return cur.fetchall()


def _get(conn: psycopg.Connection, readable: Sequence[str], lineage: int, *, lock: bool = False) -> Task:
    sql = _SELECT + " AND n.lineage = %(lineage)s AND n.space = ANY(%(spaces)s)"
    if lock:
        sql += " FOR UPDATE OF n"
    with conn.cursor(row_factory=class_row(Task)) as cur:
        cur.execute(sql, {"lineage": lineage, "spaces": list(readable)})
        row = cur.fetchone()
    if row is None:
        raise NotFound(
            f"No task n_{lineage} in this session's spaces.",
            "read_messages lists this project's open tasks; `lore tasks` lists them in a terminal.",
        )
    return row


def _event(conn: psycopg.Connection, lineage: int, status: str, note: str | None, origin: Origin) -> None:
    conn.execute(
        "INSERT INTO task_events (lineage, status, note, space, source, workspace, client_name) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (lineage, status, note, origin.space, origin.source, origin.workspace, origin.client_name),
    )


# --- for a listener's own (async) connection -----------------------------------------------------

SINCE = (
    "SELECT lineage, space, status, title, body, from_space, from_source, from_workspace, filed_at, "
    "updated_at FROM lore_inbox_since(%(space)s, %(after)s, 50)"
)
LATEST = "SELECT coalesce(max(lineage), 0) FROM tasks"


def inbox_since_now(conn: psycopg.Connection, space: str, after: int) -> list[Task]:
    """`inbox_since` on a pooled (synchronous) connection: `lore listen` without a LISTEN of its own."""
    with conn.cursor(row_factory=class_row(Task)) as cur:
        cur.execute(SINCE, {"space": space, "after": after})
        return cur.fetchall()


def latest_lineage(conn: psycopg.Connection) -> int:
    row = conn.execute(LATEST).fetchone()
    return int(row[0]) if row else 0


async def inbox_since(conn: psycopg.AsyncConnection, space: str, after: int) -> list[Task]:
    """Inbox tasks of `space` with a lineage above `after`, oldest first (what `lore listen` prints)."""
    async with conn.cursor(row_factory=class_row(Task)) as cur:
        await cur.execute(SINCE, {"space": space, "after": after})
        return await cur.fetchall()


async def latest(conn: psycopg.AsyncConnection) -> int:
    cur = await conn.execute(LATEST)
    row = await cur.fetchone()
    return int(row[0]) if row else 0
