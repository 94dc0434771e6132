"""Facts: short bitemporal statements. Every function takes a connection and returns frozen rows.

Public id: `f_<lineage>`. A revision closes the current version (superseded_at) and inserts the next
one with the same lineage; the partial unique index `facts_one_current` guarantees at most one
current version per lineage even under concurrent writers.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg
from psycopg.rows import dict_row

from lore.core import ids, secrets
from lore.core.errors import InvalidInput
from lore.core.rows import Fact as Fact
from lore.core.session import Origin
from lore.core.timeline import When
from lore.store.versions import Versioned

_SAME_HINT = "Give a new statement, subject, valid_from or valid_to (what differs from the current version)."
_COLUMNS = (
    "lineage, version_id, space, statement, subject, valid_from, valid_to, "
    "recorded_at, superseded_at, source, workspace"
)
NOW = When()  # current belief, valid now
VERSIONS = Versioned("facts", "fact", _COLUMNS, Fact, ids.fact, "fact_lineage_seq", "recall_facts", "revise")


def remember(
    conn: psycopg.Connection,
    origin: Origin,
    statement: str,
    *,
    subject: str | None = None,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    allow_secret: bool = False,
) -> Fact:
    secrets.refuse(("statement", statement), ("subject", subject), what="fact", allow=allow_secret)
    _check_interval(valid_from, valid_to)
    fields = {"statement": statement, "subject": subject, "valid_to": valid_to}
    if valid_from is not None:  # else the column's default: now
        fields["valid_from"] = valid_from
    with conn.transaction():
        return VERSIONS.insert(conn, origin, fields)


def revise(
    conn: psycopg.Connection,
    origin: Origin,
    readable: Sequence[str],
    lineage: int,
    *,
    statement: str | None = None,
    subject: str | None = None,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    allow_secret: bool = False,
) -> tuple[Fact, Fact]:
    """Close the current version of `lineage` and write the next; returns (old, new)."""
    secrets.refuse(("statement", statement), ("subject", subject), what="fact", allow=allow_secret)
    if statement is None and subject is None and valid_from is None and valid_to is None:
        raise InvalidInput(f"Nothing to change in {ids.fact(lineage)}.", _SAME_HINT)
    with conn.transaction():
        old = VERSIONS.lock_current(conn, origin, readable, lineage, "Revise it")
        text = statement or old.statement
        about = subject if subject is not None else old.subject
        new_from = valid_from or old.valid_from
        new_to = valid_to if valid_to is not None else old.valid_to
        if (text, about, new_from, new_to) == (old.statement, old.subject, old.valid_from, old.valid_to):
            raise InvalidInput(f"Nothing to change: {old.id} already says exactly that.", _SAME_HINT)
        _check_interval(new_from, new_to)
        stamp = VERSIONS.close(conn, old)
        fields = {"statement": text, "subject": about, "valid_from": new_from, "valid_to": new_to}
        new = VERSIONS.insert(conn, origin, fields, lineage=lineage, space=old.space, recorded_at=stamp)
    return old, new


def forget(
    conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int, reason: str
) -> Fact:
    """Close belief in the current version and record who forgot it and why. The row stays."""
    return VERSIONS.forget(conn, origin, readable, lineage, reason)


def _params(
    spaces: Sequence[str], when: When, subject: str | None, prefer: str | None, limit: int
) -> dict[str, object]:
    return {
        "spaces": list(spaces),
        "as_of": when.as_of,
        "valid_at": when.valid_at,
        "subject": subject,
        "prefer": prefer,
        "limit": limit,
    }


_PAGE = f"""SELECT t.total, f.* FROM (
    SELECT count(*) AS total FROM lore_facts_visible(%(spaces)s, %(as_of)s, %(valid_at)s, %(subject)s)) AS t
LEFT JOIN LATERAL (SELECT {_COLUMNS} FROM lore_facts_ordered(
    %(spaces)s, %(prefer)s, %(limit)s, %(as_of)s, %(valid_at)s, %(subject)s)) AS f ON true"""


def page(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    when: When = NOW,
    *,
    subject: str | None = None,
    prefer_subject: str | None = None,
    limit: int = 1000,
) -> tuple[list[Fact], int]:
    """Facts visible from `when` (see timeline.py), the first `limit` in render order, and how many
    there are in all, in one round trip. The order: those about `prefer_subject` first, then those
    with no subject, then the rest; newest belief first within each. Filter and order are the SQL
    functions lore_facts_visible and lore_facts_ordered (migration 0006), shared with the
    session-start hook."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_PAGE, _params(spaces, when, subject, prefer_subject, limit)).fetchall()
    total = int(rows[0]["total"]) if rows else 0
    found = [Fact(**{k: v for k, v in r.items() if k != "total"}) for r in rows if r["lineage"] is not None]
    return found, total


def history(conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> list[Fact]:
    """Every version of one fact, oldest first (empty when not visible from `spaces`)."""
    return VERSIONS.history(conn, spaces, lineage)


def histories(
    conn: psycopg.Connection, spaces: Sequence[str], lineages: Sequence[int]
) -> dict[int, list[Fact]]:
    """Every version of several facts, oldest first, by lineage, in one query."""
    return VERSIONS.histories(conn, spaces, lineages)


def _check_interval(valid_from: datetime | None, valid_to: datetime | None) -> None:
    if valid_from and valid_to and valid_to <= valid_from:
        raise InvalidInput(
            f"valid_to ({valid_to.isoformat()}) is not after valid_from ({valid_from.isoformat()}).",
            "Give a valid_to later than valid_from, or leave valid_to out (still true).",
        )
