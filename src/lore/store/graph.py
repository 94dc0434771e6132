"""Edges: typed, directed links between two notes of one space (docs/design.md, Edges), and the 1-hop
neighbourhood that search_notes adds to its hits.

Edges join note lineages (`n_<lineage>`), so a revised note keeps its links. They never cross
spaces: this module refuses it with a clear message, and a trigger (migration 0001) guarantees it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from lore.core import ids
from lore.core.errors import InvalidInput, NotFound, Refused
from lore.core.session import Origin
from lore.core.validate import RELATIONS as RELATIONS
from lore.core.validate import relation as relation


@dataclass(frozen=True)
class Edge:
    from_note: int
    relation: str
    to_note: int
    space: str
    created: bool  # False when the same edge already existed

    def describe(self) -> str:
        return f"{ids.note(self.from_note)} {self.relation} {ids.note(self.to_note)}"


@dataclass(frozen=True)
class Link:
    """An edge seen from a search hit: `other` is the neighbour."""

    hit: int
    other: int
    relation: str
    outgoing: bool  # hit -relation-> other

    def describe(self) -> str:
        if self.outgoing:
            return f"{ids.note(self.hit)} {self.relation} this"
        return f"this {self.relation} n_{self.hit}"


def link(
    conn: psycopg.Connection,
    origin: Origin,
    readable: Sequence[str],
    from_note: int,
    rel: str,
    to_note: int,
) -> Edge:
    """Link two notes of the session's own space; linking again is a no-op that says so."""
    rel = relation(rel)
    if from_note == to_note:
        raise InvalidInput("A note cannot link to itself.", "Pass two different note ids.")
    with conn.transaction():
        rows: dict[int, str] = dict(
            conn.execute(
                "SELECT lineage, space FROM notes WHERE lineage = ANY(%s) AND superseded_at IS NULL "
                "AND space = ANY(%s)",
                ([from_note, to_note], list(readable)),
            ).fetchall()
        )
        for lineage in (from_note, to_note):
            if lineage not in rows:
                raise NotFound(
                    f"No note n_{lineage} in this session's spaces.", "Call search_notes to find note ids."
                )
        for lineage in (from_note, to_note):
            if rows[lineage] != origin.space:
                raise Refused(
                    f"n_{lineage} is in space {rows[lineage]!r}; edges never cross spaces "
                    f"(this session writes {origin.space!r}).",
                    "Link notes of this session's own space only.",
                )
        row = conn.execute(
            "INSERT INTO edges (space, from_note, relation, to_note, source) VALUES (%s, %s, %s, %s, %s) "
            "ON CONFLICT (from_note, relation, to_note) DO NOTHING RETURNING id",
            (origin.space, from_note, rel, to_note, origin.source),
        ).fetchone()
    return Edge(from_note, rel, to_note, origin.space, created=row is not None)


def edges_of(conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> list[Edge]:
    """Every edge touching a note, both directions (for the UI and the CLI)."""
    rows = conn.execute(
        "SELECT from_note, relation, to_note, space FROM edges "
        "WHERE (from_note = %s OR to_note = %s) AND space = ANY(%s) ORDER BY id",
        (lineage, lineage, list(spaces)),
    ).fetchall()
    return [Edge(f, r, t, s, created=False) for f, r, t, s in rows]


_NEIGHBOURS = """
SELECT e.from_note, e.to_note, e.relation, e.from_note = ANY(%(hits)s) AS outgoing
FROM edges e
JOIN notes n ON n.lineage = CASE WHEN e.from_note = ANY(%(hits)s) THEN e.to_note ELSE e.from_note END
            AND n.superseded_at IS NULL AND n.space = ANY(%(spaces)s)
WHERE (e.from_note = ANY(%(hits)s) OR e.to_note = ANY(%(hits)s)) AND e.space = ANY(%(spaces)s)
ORDER BY e.id
"""


def neighbours(conn: psycopg.Connection, hits: Sequence[int], spaces: Sequence[str]) -> list[Link]:
    """Current, readable notes one edge away from any of `hits` (either direction)."""
    if not hits:
        return []
    rows = conn.execute(_NEIGHBOURS, {"hits": list(hits), "spaces": list(spaces)}).fetchall()
    out = []
    for from_note, to_note, rel, outgoing in rows:
        if outgoing:
            out.append(Link(from_note, to_note, rel, True))
        if to_note in hits:
            out.append(Link(to_note, from_note, rel, False))
    return out
