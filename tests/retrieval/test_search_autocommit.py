"""The vector half's settings (hnsw.ef_search, iterative scan) are local to a transaction: on an
autocommit connection, as the server's pool is, they must still be in force when the query runs.
Without them the HNSW scan stops at 40 rows: a space whose notes are not among the 40 nearest of
ALL spaces finds nothing semantic. Seen in bench/locomo.py when the pool went autocommit."""

from __future__ import annotations

import random

import psycopg
import pytest

from lore.store import search

MODEL = "all-MiniLM-L6-v2-int8"


def _vector(rng: random.Random, base: list[float], noise: float) -> str:
    values = [b + rng.gauss(0, noise) for b in base]
    return "[" + ",".join(f"{v:.5f}" for v in values) + "]"


@pytest.fixture
def crowded(conn: psycopg.Connection) -> list[float]:
    """600 notes of space `other` right next to the query, 12 of space `mine` a little further."""
    rng = random.Random(7)
    query = [rng.gauss(0, 1) for _ in range(384)]
    rows = [("other", _vector(rng, query, 0.05)) for _ in range(600)]
    rows += [("mine", _vector(rng, query, 0.6)) for _ in range(12)]
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO notes (lineage, space, kind, body, source, embedding, embedding_model) "
            "VALUES (nextval('note_lineage_seq'), %s, 'note', 'x', 'test', %s::vector, %s)",
            [(space, vec, MODEL) for space, vec in rows],
        )
    conn.commit()
    conn.execute("ANALYZE notes")
    conn.commit()
    return query


def test_an_autocommit_connection_still_scans_deep_enough(
    conn: psycopg.Connection, crowded: list[float]
) -> None:
    with psycopg.connect(conn.info.dsn, autocommit=True) as auto:
        # The HNSW index, as the planner picks it on a large table (here it would sort 612 rows).
        auto.execute("SET enable_seqscan = off")
        auto.execute("SET enable_sort = off")
        found = search.vector_candidates(auto, ["mine"], crowded, model=MODEL, depth=50)
    assert len(found) == 12, len(found)
