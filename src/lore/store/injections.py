"""The record of what lore told each agent (migration 0014): written by lore_injection_record (the
local hook calls it through psql, the service through psycopg), listed by `lore log` and the web UI,
scrubbed by `lore purge`. And what search_notes returned (`retrievals`): the usage counts of every
fact and note (lore_usage) come from these two tables and `irrelevant`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import class_row
from psycopg.types.json import Jsonb

from lore.core.injection import Injection, Usage

_COLUMNS = (
    "id, at, kind, via, client, session_id, workspace, space, readable, shown, cut, handoff, instructions, "
    "chars, budget, duration_ms, text, outcome, detail"
)
# The records of `spaces`, and those with no space (a config error, a tie) of the same owner: the
# signed-in user, or no one locally.
_WHOSE = "(space = ANY(%(spaces)s) OR (space IS NULL AND coalesce(owner, '') = coalesce(%(owner)s, '')))"


def record(conn: psycopg.Connection, row: Mapping[str, Any], retention_days: int) -> int:
    """Write one injection (and drop records past the retention); returns its id."""
    found = conn.execute(
        "SELECT lore_injection_record(%s::jsonb, %s)", (Jsonb(dict(row)), retention_days)
    ).fetchone()
    assert found is not None
    return int(found[0])


def recent(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    *,
    client: str | None = None,
    workspace: str | None = None,
    since: datetime | None = None,
    limit: int = 50,
    owner: str | None = None,
) -> list[Injection]:
    """The latest records of `spaces` (and the space-less ones of `owner`), newest first."""
    with conn.cursor(row_factory=class_row(Injection)) as cur:
        cur.execute(
            f"""SELECT {_COLUMNS} FROM injections
                WHERE {_WHOSE} AND (%(client)s::text IS NULL OR client = %(client)s)
                  AND (%(workspace)s::text IS NULL OR workspace = %(workspace)s
                       OR starts_with(workspace, rtrim(%(workspace)s, '/') || '/'))
                  AND (%(since)s::timestamptz IS NULL OR at >= %(since)s)
                ORDER BY at DESC, id DESC LIMIT %(limit)s""",
            {
                "spaces": list(spaces),
                "client": client,
                "workspace": workspace,
                "since": since,
                "limit": limit,
                "owner": owner,
            },
        )
        return cur.fetchall()


def get(
    conn: psycopg.Connection, spaces: Sequence[str], injection_id: int, owner: str | None = None
) -> Injection | None:
    with conn.cursor(row_factory=class_row(Injection)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM injections WHERE id = %(id)s AND {_WHOSE}",
            {"id": injection_id, "spaces": list(spaces), "owner": owner},
        )
        return cur.fetchone()


def returned(conn: psycopg.Connection, space: str, client: str, ids: Sequence[str]) -> None:
    """What one search_notes call returned (ids only; never the query)."""
    if ids:
        conn.execute(
            "INSERT INTO retrievals (space, client, returned) VALUES (%s, %s, %s)", (space, client, list(ids))
        )


def usage(conn: psycopg.Connection, spaces: Sequence[str], ids: Sequence[str]) -> dict[str, Usage]:
    """How each item was used: shown at session start, cut, returned by search, marked irrelevant."""
    if not ids:
        return {}
    with conn.cursor(row_factory=class_row(Usage)) as cur:
        cur.execute("SELECT * FROM lore_usage(%s, %s)", (list(spaces), list(ids)))
        return {u.item: u for u in cur.fetchall()}


# The lines of a record's text that belong to an item: the line naming its id and, for a handoff (its
# "Last session here" line names the note), the message lines it quotes (`> `) and its state line.
_ITEM_LINES = (
    r"^[^\n]*\m@id@\M[^\n]*(\n> [^\n]*)*"
    r"(\n(no uncommitted changes|[0-9]+ changed files?|Doing: )[^\n]*)?(\n|$)"
)


def scrub(conn: psycopg.Connection, item: str) -> int:
    """`lore purge`: the item leaves the record (its id from every list, its lines from the texts:
    a handoff's quoted message lines too); returns how many records held it."""
    cur = conn.execute(
        """UPDATE injections SET shown = array_remove(shown, %(item)s),
                  cut = ARRAY(SELECT c FROM unnest(cut) AS c  -- a fold `f_4>f_8` names it too
                              WHERE c <> %(item)s AND split_part(c, '>', 1) <> %(item)s
                                AND split_part(c, '>', 2) <> %(item)s),
                  instructions = array_remove(instructions, %(item)s),
                  text = regexp_replace(text, replace(%(lines)s, '@id@', %(item)s), '', 'gn')
           WHERE shown @> ARRAY[%(item)s] OR instructions @> ARRAY[%(item)s]
              OR position(%(item)s IN array_to_string(cut, ' ')) > 0 OR position(%(item)s IN text) > 0""",
        {"item": item, "lines": _ITEM_LINES},
    )
    conn.execute(
        "UPDATE retrievals SET returned = array_remove(returned, %(item)s) WHERE returned @> ARRAY[%(item)s]",
        {"item": item},
    )
    return cur.rowcount


def used_since(
    conn: psycopg.Connection, spaces: Sequence[str], since: datetime
) -> tuple[set[str], datetime | None]:
    """The items shown at a session start or returned by a search in `spaces` since `since`, and when
    the record of `spaces` begins (None: nothing recorded): what `lore tidy` calls unused."""
    rows = conn.execute(
        """SELECT DISTINCT x.item FROM injections j, unnest(j.shown) AS x(item)
           WHERE j.space = ANY(%(spaces)s) AND j.at >= %(since)s
           UNION
           SELECT DISTINCT x.item FROM retrievals r, unnest(r.returned) AS x(item)
           WHERE r.space = ANY(%(spaces)s) AND r.at >= %(since)s""",
        {"spaces": list(spaces), "since": since},
    ).fetchall()
    began = conn.execute(
        """SELECT least((SELECT min(at) FROM injections WHERE space = ANY(%(spaces)s)),
                        (SELECT min(at) FROM retrievals WHERE space = ANY(%(spaces)s)))""",
        {"spaces": list(spaces)},
    ).fetchone()
    return {str(r[0]) for r in rows}, (began[0] if began else None)
