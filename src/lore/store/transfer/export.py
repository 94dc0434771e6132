"""`lore export`: the whole memory, or a set of spaces', as the lines of an export (lore.store.transfer
has the format)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime

import psycopg
from psycopg import sql

from lore.db import migrate
from lore.store.transfer.tables import FORMAT, ORDER, SPACE_FILTER, TABLES, columns


def export(
    conn: psycopg.Connection, space: str | None = None, *, spaces: Sequence[str] | None = None
) -> Iterator[str]:
    """The lines of an export (without newlines), streamed: header, rows, trailer. `space`: that
    space's rows; `spaces`: those spaces' (a signed-in user's own); neither: the whole database."""
    chosen = [space] if space is not None else (list(spaces) if spaces is not None else None)
    version = migrate.current_version(conn)
    conn.execute("SET TIME ZONE 'UTC'")  # timestamps in one form on both sides of the round trip
    yield _dumps(
        {
            "lore_export": FORMAT,
            "schema": version,
            "exported_at": datetime.now(UTC).isoformat(),
            "space": space,
        }
        | ({"spaces": chosen} if space is None and chosen is not None else {})
    )
    counts: dict[str, int] = {}
    for table in TABLES:
        cols = columns(conn, table)
        where = sql.SQL(SPACE_FILTER[table]) if chosen is not None else sql.SQL("true")
        order = ORDER.get(table, cols[0])
        query = sql.SQL("SELECT to_jsonb(t) FROM {} AS t WHERE {} ORDER BY {}").format(
            sql.Identifier(table), where, sql.SQL(order)
        )
        counts[table] = 0
        with conn.cursor(name=f"lore_export_{table}") as cur:
            cur.itersize = 500
            cur.execute(query, {"spaces": chosen})
            for (row,) in cur:
                counts[table] += 1
                yield _dumps({"table": table, "row": {c: row.get(c) for c in cols}})
    yield _dumps({"end": True, "rows": sum(counts.values()), "counts": counts})


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
