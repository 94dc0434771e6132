"""Read-only overviews of spaces: counts per space, what waits in a space's inbox, the workspaces
that wrote into it, what was forgotten (and by whom, why). Read by the web UI, the JSON API and
`lore doctor`; the counts use the SQL functions the session-start hook reads (migration 0006)."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg
from psycopg.rows import class_row

from lore.core.rows import Counts as Counts
from lore.core.rows import Forgotten as Forgotten
from lore.core.rows import Seen as Seen

_COUNTS = """
SELECT s.space,
       (SELECT count(*) FROM lore_facts_visible(ARRAY[s.space])),
       (SELECT count(*) FROM notes n WHERE n.space = s.space AND n.superseded_at IS NULL),
       (SELECT count(*) FROM notes n LEFT JOIN tasks t ON t.lineage = n.lineage
          WHERE n.space = s.space AND n.kind = 'task' AND n.superseded_at IS NULL
            AND coalesce(t.status, 'todo') <> 'done'),
       w.inbox,
       w.unread
FROM unnest(%s::text[]) AS s(space), lore_inbox_counts(s.space) AS w
"""


_SEEN = """
SELECT space, workspace, max(at) AS last FROM (
    SELECT space, workspace, recorded_at AS at FROM facts
     WHERE %(spaces)s::text[] IS NULL OR space = ANY(%(spaces)s)
    UNION ALL
    SELECT space, workspace, recorded_at FROM notes
     WHERE %(spaces)s::text[] IS NULL OR space = ANY(%(spaces)s)
) AS w
WHERE workspace IS NOT NULL
GROUP BY space, workspace
ORDER BY last DESC
LIMIT %(limit)s
"""

# Each space's last write (a fact, a note, an agent session's handoff), each max read from an index.
_LAST_USED = """
SELECT s.space FROM unnest(%s::text[]) AS s(space)
CROSS JOIN LATERAL (SELECT greatest(
    (SELECT max(recorded_at) FROM facts f WHERE f.space = s.space AND f.superseded_at IS NULL),
    (SELECT max(recorded_at) FROM notes n WHERE n.space = s.space),
    (SELECT max(updated_at) FROM handoffs h WHERE h.space = s.space)) AS at) AS w
WHERE w.at IS NOT NULL
ORDER BY w.at DESC, s.space
LIMIT 1
"""

_FORGOTTEN = """
SELECT g.item_kind, g.lineage, g.space, g.reason, g.source, g.workspace, g.at,
       coalesce(CASE WHEN g.item_kind = 'fact' THEN
                    (SELECT f.statement FROM facts f WHERE f.lineage = g.lineage AND f.space = g.space
                     ORDER BY f.recorded_at DESC LIMIT 1)
                ELSE (SELECT coalesce(n.title, left(n.body, 160)) FROM notes n
                      WHERE n.lineage = g.lineage AND n.space = g.space
                      ORDER BY n.recorded_at DESC LIMIT 1) END, '') AS text
FROM forget_log g
WHERE g.space = ANY(%(spaces)s) AND (%(kind)s::text IS NULL OR g.item_kind = %(kind)s)
  AND (%(lineage)s::bigint IS NULL OR g.lineage = %(lineage)s)
ORDER BY g.at DESC, g.id DESC
LIMIT %(limit)s
"""


def counts(conn: psycopg.Connection, spaces: Sequence[str]) -> dict[str, Counts]:
    rows = conn.execute(_COUNTS, (list(spaces),)).fetchall()
    return {space: Counts(*(int(v) for v in values)) for space, *values in rows}


def last_used(conn: psycopg.Connection, spaces: Sequence[str]) -> str | None:
    """The one of `spaces` written to most recently (by any agent, the CLI or the web UI), or None
    when none holds anything yet."""
    row = conn.execute(_LAST_USED, (list(spaces),)).fetchone()
    return str(row[0]) if row else None


def workspaces_seen(conn: psycopg.Connection, spaces: Sequence[str] | None, limit: int = 200) -> list[Seen]:
    """The workspaces that facts and notes were written from (into `spaces`, or into any space when
    None), each with the space and the time of its last write, most recent first."""
    with conn.cursor(row_factory=class_row(Seen)) as cur:
        cur.execute(_SEEN, {"spaces": list(spaces) if spaces is not None else None, "limit": limit})
        return cur.fetchall()


def forgotten(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    *,
    kind: str | None = None,
    lineage: int | None = None,
    limit: int = 20,
) -> list[Forgotten]:
    """What was forgotten in `spaces`, newest first: who (client, workspace), when and why."""
    params = {"spaces": list(spaces), "kind": kind, "lineage": lineage, "limit": limit}
    with conn.cursor(row_factory=class_row(Forgotten)) as cur:
        cur.execute(_FORGOTTEN, params)
        return cur.fetchall()
