"""The second model's vectors (`notes.embedding2`): a third signal fused beside the keywords and the
first model's vectors (docs/design.md, Retrieval). Filled like the first (lore.store.vectors):
off the write path, once a note's context is known, from the same text.

Its indexes (the model's HNSW index and the rows still waiting for a vector) are made on first use:
a lore without a second model pays nothing for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from lore.embeddings.runner import Runner
from lore.store import vectors
from lore.store.vectors import BATCH, NOTE_ROWS, READY

_PENDING = f"{NOTE_ROWS} AND embedding2 IS NULL AND {READY} ORDER BY version_id LIMIT %s"
_STALE = f"""{NOTE_ROWS} AND (embedding2_model IS DISTINCT FROM %s) AND version_id > %s
ORDER BY version_id LIMIT %s"""
_FILL = """UPDATE notes SET embedding2 = %s::vector, embedding2_model = %s
WHERE version_id = %s AND superseded_at IS NULL AND {guard}"""
_WAITING = sql.SQL(
    "CREATE INDEX IF NOT EXISTS notes_unembedded2 ON notes (version_id) "
    "WHERE embedding2 IS NULL AND superseded_at IS NULL"
)
_made: set[tuple[str, str]] = set()  # (database, model) whose indexes this process has seen made


def index_name(model: str) -> str:
    return vectors.index_name("notes_hnsw2_", model)


def ensure_indexes(conn: psycopg.Connection, model: str, dim: int) -> None:
    """The model's HNSW index over `embedding2` and the index of rows waiting for one."""
    key = (conn.info.dsn, model)
    if key in _made:
        return
    for statement in (_WAITING, vectors.hnsw(index_name(model), "embedding2", model, dim)):
        vectors.create(conn, statement)
    _made.add(key)


def embed_batch(
    conn: psycopg.Connection, runner: Runner, rows: Sequence[tuple[Any, ...]], *, replace: bool
) -> int:
    """Embed rows (version_id, title, tags, body, context) with the second model and store them."""
    return vectors.embed_batch(
        conn, runner, rows, replace=replace, fill=_FILL, empty="embedding2 IS NULL", ensure=ensure_indexes
    )


def embed_pending(conn: psycopg.Connection, runner: Runner, limit: int = BATCH) -> int:
    model = runner.model
    if model is None:
        return 0
    embedder = runner.embedder
    ensure_indexes(conn, model, (embedder.dim if embedder is not None else None) or 384)
    rows = conn.execute(_PENDING, (limit,)).fetchall()
    conn.commit()
    return embed_batch(conn, runner, rows, replace=False)


def reindex(conn: psycopg.Connection, runner: Runner, *, everything: bool = False, batch: int = 64) -> int:
    """Embed every current note without a second vector of `runner`'s model (all with `everything`)."""
    model = runner.model
    if model is None:
        return 0
    return vectors.again(conn, runner, _STALE, embed_batch, "" if everything else model, 0, batch)
