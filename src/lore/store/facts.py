"""Facts: short bitemporal statements. Every function takes a connection and returns frozen rows.

Public id: `f_<lineage>`. A revision closes the current version (superseded_at) and inserts the next
one with the same lineage; the partial unique index `facts_one_current` guarantees at most one
current version per lineage even under concurrent writers.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg
from psycopg import sql
from psycopg.rows import class_row, dict_row

from lore.core import ids
from lore.core.admission import FactCandidate
from lore.core.rows import Fact as Fact
from lore.core.session import Origin
from lore.core.timeline import When
from lore.embeddings import to_pgvector
from lore.store.versions import Versioned

_COLUMNS = (
    "lineage, version_id, space, statement, subject, valid_from, valid_to, "
    "recorded_at, superseded_at, source, workspace, stated_at"
)
NOW = When()  # current belief, valid now
Vector = tuple[str, Sequence[float]]  # (the model that made it, the vector)
VERSIONS = Versioned("facts", "fact", _COLUMNS, Fact, ids.fact, "fact_lineage_seq", "recall_facts", "revise")


def remember(
    conn: psycopg.Connection,
    origin: Origin,
    statement: str,
    *,
    subject: str | None = None,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
) -> Fact:
    """A new fact, unchecked (tests and imports write known rows with it)."""
    return write(conn, origin, FactCandidate(statement, subject, valid_from, valid_to))


def write(
    conn: psycopg.Connection, origin: Origin, new: FactCandidate, *, vector: Vector | None = None
) -> Fact:
    """A new fact, as given (lore.service.memory.remember_fact admits it first); `vector`: its
    statement's (model, vector) when the write made one (else the embedding worker makes it later)."""
    fields: dict[str, object] = {"statement": new.statement, "subject": new.subject, "valid_to": new.valid_to}
    if new.valid_from is not None:  # else the column's default: now
        fields["valid_from"] = new.valid_from
    if vector is not None:
        fields["embedding_model"], fields["embedding"] = vector[0], to_pgvector(vector[1])
    with conn.transaction():
        return VERSIONS.insert(conn, origin, fields)


def lock(conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int) -> Fact:
    """The current version of `lineage`, locked until the transaction ends, if `origin` may revise it."""
    return VERSIONS.lock_current(conn, origin, readable, lineage, "Revise it")


def write_next(
    conn: psycopg.Connection,
    origin: Origin,
    old: Fact,
    new: FactCandidate,
    *,
    stated_at: datetime | None = None,
) -> Fact:
    """Close `old` (locked) and write its next version, `new`, as given (every field: its
    FactCandidate.onto(old); lore.service.memory.revise_in admits it first). `stated_at`: the new
    version brings back a statement made then (a reverted merge)."""
    fields = {"statement": new.statement, "subject": new.subject, "valid_from": new.valid_from}
    fields |= {"valid_to": new.valid_to} | ({"stated_at": stated_at} if stated_at is not None else {})
    return VERSIONS.next(conn, origin, old, fields)


def forget(
    conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int, reason: str
) -> Fact:
    """Close belief in the current version and record who forgot it and why. The row stays."""
    return VERSIONS.forget(conn, origin, readable, lineage, reason)


def restore(conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int) -> Fact:
    """Believe a forgotten fact again: its last version written anew as the current one (undoing a
    merge or a forget from `lore tidy`), in its own place in time (`stated_at`: when that statement
    was made, so it is not "newer" than what was said after it) and valid as it was."""
    return VERSIONS.restore(conn, origin, readable, lineage, _restored)


def _restored(last: Fact) -> dict[str, object]:
    kept = {name: getattr(last, name) for name in ("statement", "subject", "valid_from", "valid_to")}
    return kept | {"stated_at": last.stated}


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


# The facts in lore_facts_ordered's own order (WITH ORDINALITY; nothing above sorts them again).
_PAGE = f"""SELECT t.total, f.* FROM (
    SELECT count(*) AS total FROM lore_facts_visible(%(spaces)s, %(as_of)s, %(valid_at)s, %(subject)s)) AS t
LEFT JOIN LATERAL (SELECT {_COLUMNS}, ordinality FROM lore_facts_ordered(
    %(spaces)s, %(prefer)s, %(limit)s, %(as_of)s, %(valid_at)s, %(subject)s) WITH ORDINALITY) AS f ON true
ORDER BY f.ordinality"""


def page(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    when: When = NOW,
    *,
    subject: str | None = None,
    prefer_subject: str | None = None,
    limit: int = 1000,
) -> tuple[list[Fact], int]:
    """Facts visible from `when` (see timeline.py), the first `limit` in the order shown, and how many
    there are in all, in one round trip. The order: those about `prefer_subject` first, then those
    with no subject, then the rest; newest belief first within each. Filter and order are the SQL
    functions lore_facts_visible and lore_facts_ordered (migration 0006), shared with the
    session-start hook."""
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(_PAGE, _params(spaces, when, subject, prefer_subject, limit)).fetchall()
    total = int(rows[0]["total"]) if rows else 0
    found = [
        Fact(**{k: v for k, v in r.items() if k not in ("total", "ordinality")})
        for r in rows
        if r["lineage"] is not None
    ]
    return found, total


# The current facts of a space (still true) sharing a word with a text, most alike first (ts_rank
# normalised by each fact's number of words): what the write-time check compares a new fact with. A
# text with no word the index keeps (`It is.`) is compared with the facts that have none either.
_ALIKE = f"""SELECT {_COLUMNS} FROM facts f, lore_any_words(%(text)s) q
WHERE f.space = %(space)s AND f.superseded_at IS NULL AND (f.valid_to IS NULL OR f.valid_to > now())
  AND CASE WHEN numnode(q) = 0 THEN f.words = ''::tsvector ELSE f.words @@ q END
ORDER BY ts_rank(f.words, q, 8) DESC, coalesce(f.stated_at, f.recorded_at) DESC, f.lineage DESC
LIMIT %(limit)s"""


def alike(conn: psycopg.Connection, space: str, text: str, *, limit: int = 20) -> list[Fact]:
    """Current facts of `space` that share a word with `text`, the most alike first."""
    with conn.cursor(row_factory=class_row(Fact)) as cur:
        cur.execute(_ALIKE, {"space": space, "text": text, "limit": limit})
        return cur.fetchall()


def current(conn: psycopg.Connection, spaces: Sequence[str], lineages: Sequence[int]) -> dict[int, Fact]:
    """The current versions of several facts that `spaces` can read, by lineage."""
    return VERSIONS.current(conn, spaces, lineages)


def everything(conn: psycopg.Connection, space: str) -> list[Fact]:
    """Every current fact of `space` (believed now, whatever its valid time), newest first (by its
    own time: Fact.stated)."""
    with conn.cursor(row_factory=class_row(Fact)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE space = %s AND superseded_at IS NULL "
            "ORDER BY coalesce(stated_at, recorded_at) DESC, lineage DESC",
            (space,),
        )
        return cur.fetchall()


def history(conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> list[Fact]:
    """Every version of one fact, oldest first (empty when not visible from `spaces`)."""
    return VERSIONS.history(conn, spaces, lineage)


def histories(
    conn: psycopg.Connection, spaces: Sequence[str], lineages: Sequence[int]
) -> dict[int, list[Fact]]:
    """Every version of several facts, oldest first, by lineage, in one query."""
    return VERSIONS.histories(conn, spaces, lineages)


# The current facts of a space (still true) nearest a vector of `model`, with their cosine: what the
# write-time check compares a new fact with beside those sharing its words. Expression and predicate
# match the model's partial HNSW index (migration 0020): model and dimension are literals.
_NEAR = sql.SQL("""
SELECT {columns}, 1 - (f.embedding::vector({dim}) <=> %(vector)s::vector({dim})) AS cosine
FROM facts f
WHERE f.embedding_model = {model} AND f.superseded_at IS NULL AND f.space = %(space)s
  AND (f.valid_to IS NULL OR f.valid_to > now())
ORDER BY f.embedding::vector({dim}) <=> %(vector)s::vector({dim})
LIMIT %(limit)s
""")


def near(
    conn: psycopg.Connection, space: str, vector: Sequence[float], model: str, *, limit: int = 10
) -> list[tuple[Fact, float]]:
    """Current facts of `space` nearest `vector` (of `model`), nearest first, with their cosine."""
    statement = _NEAR.format(
        columns=sql.SQL(", ".join(f"f.{c.strip()}" for c in _COLUMNS.split(","))),
        dim=sql.Literal(len(vector)),
        model=sql.Literal(model),
    )
    with conn.cursor(row_factory=dict_row) as cur:
        rows = cur.execute(
            statement, {"vector": to_pgvector(vector), "space": space, "limit": limit}
        ).fetchall()
    return [(Fact(**{k: v for k, v in r.items() if k != "cosine"}), float(r["cosine"])) for r in rows]


def vectors(conn: psycopg.Connection, version_ids: Sequence[int], model: str) -> dict[int, list[float]]:
    """The vectors of `model` of some fact versions (those that have one), by version id."""
    rows = conn.execute(
        "SELECT version_id, embedding::text FROM facts WHERE version_id = ANY(%s) AND embedding_model = %s",
        (list(version_ids), model),
    ).fetchall()
    return {int(v): [float(x) for x in text.strip("[]").split(",")] for v, text in rows}


# Each current fact of a space with a vector of `model`, and its `k` nearest such facts (HNSW, migration
# 0020), with their cosine: `lore tidy`'s candidates for "may say the same".
_NEIGHBOURS = sql.SQL("""
SELECT a.lineage, n.lineage, n.cosine FROM facts a
CROSS JOIN LATERAL (
    SELECT b.lineage, 1 - (b.embedding::vector({dim}) <=> a.embedding::vector({dim})) AS cosine
    FROM facts b
    WHERE b.embedding_model = {model} AND b.superseded_at IS NULL AND b.space = a.space
      AND b.lineage <> a.lineage
    ORDER BY b.embedding::vector({dim}) <=> a.embedding::vector({dim})
    LIMIT %(k)s) AS n
WHERE a.space = %(space)s AND a.superseded_at IS NULL AND a.embedding_model = {model}
""")


def neighbours(
    conn: psycopg.Connection, space: str, model: str, *, k: int = 5
) -> dict[tuple[int, int], float]:
    """(lineage, a near lineage) -> their cosine, for the current facts of `space` embedded by `model`."""
    row = conn.execute(
        "SELECT vector_dims(embedding) FROM facts WHERE space = %s AND embedding_model = %s "
        "AND superseded_at IS NULL LIMIT 1",
        (space, model),
    ).fetchone()
    if row is None:
        return {}
    statement = _NEIGHBOURS.format(dim=sql.Literal(int(row[0])), model=sql.Literal(model))
    rows = conn.execute(statement, {"space": space, "k": k}).fetchall()
    return {(int(a), int(b)): float(cos) for a, b, cos in rows}
