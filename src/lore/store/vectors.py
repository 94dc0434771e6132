"""Filling vectors, for either model: what a note's vector is made of (note_text), the notes and
facts still without one, one batch embedded and stored (guarded by `embedding IS NULL`, so two
processes racing on a row cannot clash), and `lore reindex`, which does the same in bulk and
re-embeds rows made by another model. The background thread that calls it is lore.store.embed_worker;
the second model's column is lore.store.second_vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import psycopg
from psycopg import sql

from lore.embeddings import to_pgvector
from lore.embeddings.runner import Runner
from lore.store import context, keywords

BATCH = 32
# Models whose HNSW index ships with the schema (migration 0002); others get one on first use.
BUILTIN_INDEXES = {"all-MiniLM-L6-v2-int8", "potion-base-8M"}


def note_text(title: str | None, tags: Sequence[str], body: str, context: str | None = None) -> str:
    """What a note's vector is made of: title, tags, the body, then its context (the note before it
    in its session: lore.store.context), which a model truncates first when the note is long."""
    head = "\n".join(part for part in (title, " ".join(tags)) if part)
    text = f"{head}\n{body}" if head else body
    return f"{text}\n{context}" if context else text


# What a note's vector is made of (note_text), for either model: lore.store.second_vectors reads it too.
NOTE_ROWS = "SELECT version_id, title, tags, body, context_before FROM notes WHERE superseded_at IS NULL"
# A current note is ready for a vector once its context is known (lore.store.context): one written in a
# session waits for the note before it there.
READY = "(session IS NULL OR context_before IS NOT NULL)"
_PENDING = f"{NOTE_ROWS} AND embedding IS NULL AND {READY} ORDER BY version_id LIMIT %s"
_STALE = f"""{NOTE_ROWS} AND (embedding_model IS DISTINCT FROM %s) AND version_id > %s
ORDER BY version_id LIMIT %s"""
_FILL = """
UPDATE notes SET embedding = %s::vector, embedding_model = %s
WHERE version_id = %s AND superseded_at IS NULL AND {guard}
"""


def _stale_facts(conn: psycopg.Connection, model: str) -> int:
    query = "SELECT count(*) FROM facts WHERE superseded_at IS NULL AND embedding_model IS DISTINCT FROM %s"
    row = conn.execute(query, (model,)).fetchone()
    return int(row[0]) if row else 0


def pending_count(conn: psycopg.Connection, model: str | None, *, stale: bool) -> int:
    if stale:
        query = (
            "SELECT count(*) FROM notes WHERE superseded_at IS NULL AND embedding_model IS DISTINCT FROM %s"
        )
        row = conn.execute(query, (model,)).fetchone()
    else:
        query = "SELECT count(*) FROM notes WHERE embedding IS NULL AND superseded_at IS NULL"
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


_QUEUE = """
SELECT count(*), coalesce(extract(epoch FROM now() - min(recorded_at)), 0) FROM notes
WHERE embedding IS NULL AND superseded_at IS NULL
"""


def queue(conn: psycopg.Connection) -> tuple[int, float]:
    """(notes waiting for a vector, seconds the oldest of them has waited): what /metrics shows."""
    row = conn.execute(_QUEUE).fetchone()
    return (int(row[0]), float(row[1])) if row else (0, 0.0)


def ensure_index(conn: psycopg.Connection, model: str, dim: int) -> None:
    """An HNSW index for a model that has none yet (a remote model): same shape as migration 0002."""
    if model in BUILTIN_INDEXES:
        return
    name = index_name("notes_hnsw_", model)
    exists = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    if exists and exists[0]:
        return
    create(conn, hnsw(name, "embedding", model, dim))


def index_name(prefix: str, model: str) -> str:
    """The name of a model's HNSW index: `prefix` and a hash of the model's name."""
    import hashlib

    return prefix + hashlib.sha256(model.encode()).hexdigest()[:12]


def hnsw(name: str, column: str, model: str, dim: int) -> sql.Composed:
    """An HNSW index over `model`'s vectors in `column` (embedding, embedding2) of current notes."""
    return sql.SQL(
        "CREATE INDEX IF NOT EXISTS {name} ON notes "
        "USING hnsw (({column}::vector({dim})) vector_cosine_ops) "
        "WHERE {model_column} = {model} AND superseded_at IS NULL"
    ).format(
        name=sql.Identifier(name),
        column=sql.Identifier(column),
        dim=sql.Literal(dim),
        model_column=sql.Identifier(f"{column}_model"),
        model=sql.Literal(model),
    )


def create(conn: psycopg.Connection, statement: str | sql.SQL | sql.Composed) -> None:
    """Create an index, once: another process creating it at the same moment is not an error."""
    try:
        with conn.transaction():
            conn.execute(statement)
    except psycopg.errors.UniqueViolation:  # another process created it at the same moment
        pass


def embed_batch(
    conn: psycopg.Connection,
    runner: Runner,
    rows: Sequence[tuple[Any, ...]],
    *,
    replace: bool,
    fill: str = _FILL,
    empty: str = "embedding IS NULL",
    ensure: Callable[[psycopg.Connection, str, int], None] = ensure_index,
) -> int:
    """Embed note rows (version_id, title, tags, body, context) and store the vectors; returns how
    many were stored. `fill`, `empty`, `ensure`: the column's statement, what a row without a vector
    is, and its index (the first model's, or the second's: lore.store.second_vectors)."""
    model = runner.model
    if model is None or not rows:
        return 0
    texts = [note_text(title, tags or (), body, before) for _, title, tags, body, before in rows]
    vectors = runner.batch(texts)  # no transaction is open while the embedder works
    ensure(conn, model, len(vectors[0]))
    return store(conn, fill, "true" if replace else empty, model, rows, vectors)


def store(
    conn: psycopg.Connection,
    fill: str,
    guard: str,
    model: str,
    rows: Sequence[tuple[Any, ...]],
    vectors: Sequence[Sequence[float]],
) -> int:
    """Store one vector of `model` per row (its version id first) with statement `fill`, on the rows
    its `{guard}` still allows (`true`: replace any; else only rows still without one)."""
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(
            sql.SQL(fill).format(guard=sql.SQL(guard)),
            [(to_pgvector(v), model, row[0]) for row, v in zip(rows, vectors, strict=True)],
        )
    return len(rows)


def embed_pending(conn: psycopg.Connection, runner: Runner, limit: int = BATCH) -> int:
    """Embed up to `limit` current notes without a vector, then as many facts (migration 0020)."""
    rows = conn.execute(_PENDING, (limit,)).fetchall()
    conn.commit()
    done = embed_batch(conn, runner, rows, replace=False)
    facts = conn.execute(_PENDING_FACTS, (limit,)).fetchall()
    conn.commit()
    return done + embed_facts(conn, runner, facts, replace=False)


# Facts (migration 0020): the statement is the whole text; a write that could not embed it in time
# left it without a vector.
_PENDING_FACTS = """
SELECT version_id, statement FROM facts WHERE embedding IS NULL AND superseded_at IS NULL
ORDER BY version_id LIMIT %s
"""
_STALE_FACTS = """
SELECT version_id, statement FROM facts
WHERE superseded_at IS NULL AND (embedding_model IS DISTINCT FROM %s) AND version_id > %s
ORDER BY version_id LIMIT %s
"""
_FILL_FACT = """
UPDATE facts SET embedding = %s::vector, embedding_model = %s
WHERE version_id = %s AND superseded_at IS NULL AND {guard}
"""


def embed_facts(
    conn: psycopg.Connection, runner: Runner, rows: Sequence[tuple[Any, ...]], *, replace: bool
) -> int:
    """Embed fact versions (version_id, statement) and store their vectors; returns how many."""
    model = runner.model
    if model is None or not rows:
        return 0
    vectors = runner.batch([statement for _, statement in rows])  # no transaction open meanwhile
    return store(conn, _FILL_FACT, "true" if replace else "embedding IS NULL", model, rows, vectors)


def reindex(
    conn: psycopg.Connection,
    runner: Runner,
    *,
    everything: bool = False,
    progress: Callable[[int, int], None] | None = None,
    batch: int = 64,
) -> int:
    """Embed every current note that has no vector of the configured model (all of them with
    `everything`); `progress(done, total)` after each batch. Returns how many were embedded."""
    keywords.compact(conn)
    context.rebuild(conn, everything=everything)
    model = runner.model
    if model is None:
        return 0
    # `everything`: compare with a model name no row carries, so every current row qualifies.
    against = "" if everything else model
    total = pending_count(conn, against, stale=True) + _stale_facts(conn, against)
    conn.commit()
    done = 0
    # the notes (progress told), then the facts (migration 0020): every one not of this model
    for stale, embed, first, told in (
        (_STALE, embed_batch, 0, progress),
        (_STALE_FACTS, embed_facts, -1, None),
    ):
        done = again(conn, runner, stale, embed, against, first, batch, done, told, total)
    return done


Embed = Callable[..., int]


def again(
    conn: psycopg.Connection,
    runner: Runner,
    stale: str,
    embed: Embed,
    against: str,
    last: int,
    batch: int,
    done: int = 0,
    told: Callable[[int, int], None] | None = None,
    total: int = 0,
) -> int:
    """Embed, `batch` rows at a time, every row `stale` lists (not of model `against`, above id
    `last`: a keyset walk, committed after each read); `done` plus how many were embedded."""
    while True:
        rows = conn.execute(stale, (against, last, batch)).fetchall()
        conn.commit()
        if not rows:
            return done
        done += embed(conn, runner, rows, replace=True)
        last = rows[-1][0]
        if told is not None:
            told(done, total)
