"""The audit of tidying (`tidy_actions`, migration 0015): merges, "keep both", forgets from `lore tidy`
and the web UI's Tidy page, and the facts an agent said a newer one replaces (`supersedes`). Every
act is a row; undoing one marks it (`undone_at`), never deletes it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lore.core import secrets
from lore.core.errors import NotFound
from lore.core.session import Origin

_COLUMNS = "id, at, space, action, items, target, reason, revised, source, workspace, undone_at, undone_by"


@dataclass(frozen=True)
class Action:
    id: int
    at: datetime
    space: str
    action: str  # merge | keep | forget | supersede
    items: list[str]
    target: str | None
    reason: str | None
    revised: int | None  # merge: the version_id of the target's revision (None: not revised)
    source: str
    workspace: str | None
    undone_at: datetime | None
    undone_by: str | None


def record(
    conn: psycopg.Connection,
    origin: Origin,
    action: str,
    items: Sequence[str],
    *,
    target: str | None = None,
    reason: str | None = None,
    revised: int | None = None,
) -> Action:
    secrets.refuse(("reason", reason), what="reason")
    with conn.cursor(row_factory=class_row(Action)) as cur:
        cur.execute(
            f"""INSERT INTO tidy_actions (space, action, items, target, reason, revised, source, workspace,
                                          client_name)
                VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}""",
            (
                origin.space,
                action,
                list(items),
                target,
                reason,
                revised,
                origin.source,
                origin.workspace,
                origin.client_name,
            ),
        )
        row = cur.fetchone()
    assert row is not None
    return row


def get(conn: psycopg.Connection, spaces: Sequence[str], action_id: int, *, lock: bool = False) -> Action:
    with conn.cursor(row_factory=class_row(Action)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM tidy_actions WHERE id = %s AND space = ANY(%s)"
            + (" FOR UPDATE" if lock else ""),
            (action_id, list(spaces)),
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(f"No tidy action {action_id} in these spaces.", "`lore tidy` lists the recent ones.")
    return row


def recent(conn: psycopg.Connection, spaces: Sequence[str], *, limit: int = 20) -> list[Action]:
    with conn.cursor(row_factory=class_row(Action)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM tidy_actions WHERE space = ANY(%s) ORDER BY at DESC, id DESC LIMIT %s",
            (list(spaces), limit),
        )
        return cur.fetchall()


def about(conn: psycopg.Connection, spaces: Sequence[str], item: str) -> list[Action]:
    """The acts that name `item` (as one acted on, or as the target), oldest first."""
    with conn.cursor(row_factory=class_row(Action)) as cur:
        cur.execute(
            f"""SELECT {_COLUMNS} FROM tidy_actions
                WHERE space = ANY(%s) AND (items @> ARRAY[%s] OR target = %s) ORDER BY at, id""",
            (list(spaces), item, item),
        )
        return cur.fetchall()


def undo(conn: psycopg.Connection, action_id: int, by: str) -> None:
    conn.execute(
        "UPDATE tidy_actions SET undone_at = now(), undone_by = %s WHERE id = %s AND undone_at IS NULL",
        (by, action_id),
    )


def superseded(conn: psycopg.Connection, spaces: Sequence[str]) -> dict[str, str]:
    """Facts an agent said a newer one replaces (still standing): item -> the newer fact."""
    rows = conn.execute(
        """SELECT x.item, t.target FROM tidy_actions t, unnest(t.items) AS x(item)
           WHERE t.space = ANY(%s) AND t.action = 'supersede' AND t.undone_at IS NULL
           ORDER BY t.at, t.id""",
        (list(spaces),),
    ).fetchall()
    return {str(item): str(target) for item, target in rows}


def kept_apart(conn: psycopg.Connection, spaces: Sequence[str]) -> list[frozenset[str]]:
    """The groups a person or an agent said to keep (tidy lists none of their pairs again)."""
    rows = conn.execute(
        "SELECT items FROM tidy_actions WHERE space = ANY(%s) AND action = 'keep' AND undone_at IS NULL",
        (list(spaces),),
    ).fetchall()
    return [frozenset(r[0]) for r in rows]


def scrub(conn: psycopg.Connection, item: str) -> None:
    """`lore purge`: the item leaves the audit of tidying (an act on it alone goes; it leaves the
    others' lists; an act that kept it as the target keeps no target)."""
    conn.execute("DELETE FROM tidy_actions WHERE items = ARRAY[%s]::text[]", (item,))
    conn.execute(
        "UPDATE tidy_actions SET items = array_remove(items, %(item)s) "
        "WHERE items @> ARRAY[%(item)s]::text[]",
        {"item": item},
    )
    conn.execute("UPDATE tidy_actions SET target = NULL WHERE target = %s", (item,))
