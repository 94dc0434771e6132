"""Notes: searchable text with a kind, tags and an embedding. Public id: `n_<lineage>`.

Same belief-time columns as facts: a revision closes the current version and writes the next;
forget closes belief and records the reason in forget_log. Search is lore.search; the
embedding is filled after the write by lore.embed_worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg
from psycopg.rows import class_row

from lore.errors import NotFound, Refused
from lore.session import Origin


@dataclass(frozen=True)
class Note:
    lineage: int
    version_id: int
    space: str
    kind: str
    title: str | None
    body: str
    tags: list[str]
    recorded_at: datetime
    superseded_at: datetime | None
    source: str
    workspace: str | None

    @property
    def id(self) -> str:
        return f"n_{self.lineage}"


_COLUMNS = (
    "lineage, version_id, space, kind, title, body, tags, recorded_at, superseded_at, source, workspace"
)


def remember(
    conn: psycopg.Connection,
    origin: Origin,
    body: str,
    *,
    kind: str = "note",
    title: str | None = None,
    tags: Sequence[str] = (),
) -> Note:
    with conn.transaction(), conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(
            f"""INSERT INTO notes (lineage, space, kind, title, body, tags, source, workspace)
                VALUES (nextval('note_lineage_seq'), %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}""",
            (origin.space, kind, title, body, list(tags), origin.source, origin.workspace),
        )
        row = cur.fetchone()
    assert row is not None
    return row


def get(conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> Note:
    with conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM notes WHERE lineage = %s AND superseded_at IS NULL AND space = ANY(%s)",
            (lineage, list(spaces)),
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(
            f"No note n_{lineage} in this session's spaces.", "Call search_notes to find note ids."
        )
    return row


def forget(
    conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int, reason: str
) -> Note:
    with conn.transaction(), conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM notes WHERE lineage = %s AND superseded_at IS NULL AND space = ANY(%s) "
            "FOR UPDATE",
            (lineage, list(readable)),
        )
        old = cur.fetchone()
        if old is None:
            raise NotFound(
                f"No note n_{lineage} in this session's spaces.", "Call search_notes to find note ids."
            )
        if old.space != origin.space:
            raise Refused(
                f"n_{lineage} belongs to space {old.space!r}, which this session may read but not change.",
                f"Forget it from a workspace of {old.space!r}.",
            )
        conn.execute(
            "UPDATE notes SET superseded_at = greatest(clock_timestamp(), recorded_at) WHERE version_id = %s",
            (old.version_id,),
        )
        conn.execute(
            "INSERT INTO forget_log (space, item_kind, lineage, reason, source, workspace) "
            "VALUES (%s, 'note', %s, %s, %s, %s)",
            (old.space, lineage, reason, origin.source, origin.workspace),
        )
    return old
