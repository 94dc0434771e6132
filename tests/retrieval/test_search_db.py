"""Hybrid search, feedback, edges and embedding on the real database, with the `fake` embedder."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import psycopg_pool
import pytest

from lore.core import ranking
from lore.core.errors import InvalidInput, NotFound, Refused
from lore.core.session import Origin
from lore.embeddings.runner import Runner
from lore.store import graph, notes, search
from lore.store.embed_worker import Worker
from lore.store.vectors import embed_pending, reindex

ALPHA = Origin("alpha", "test", "/code/alpha")
BETA = Origin("beta", "test", "/code/beta")


@pytest.fixture
def fake() -> Runner:
    return Runner({"LORE_EMBEDDER": "fake"})


def find(conn: psycopg.Connection, runner: Runner, query: str, **kw: Any) -> list[ranking.Hit]:
    vector = runner.query(query)
    return search.search(
        conn,
        kw.pop("spaces", ["alpha"]),
        query,
        session_space="alpha",
        vector=vector,
        model=runner.model if vector else None,
        min_similarity=runner.min_similarity(),
        **kw,
    )


def seed(conn: psycopg.Connection) -> list[int]:
    bodies = [
        ("Deploys go out with `make ship` after CI is green", "Deploying", "devenv"),
        ("Redis caches session tokens for 15 minutes; eviction is LRU", "Session cache", "tech"),
        ("We chose PostgreSQL over MongoDB for transactions", "Database choice", "decision"),
        ("Friday deploys need a second reviewer", None, "pattern"),
    ]
    return [notes.remember(conn, ALPHA, b, title=t, kind=k).lineage for b, t, k in bodies]


def test_hybrid_search_ranks_filters_and_cuts(conn: psycopg.Connection, fake: Runner) -> None:
    ids = seed(conn)
    assert embed_pending(conn, fake) == 4
    hits = find(conn, fake, "how do deploys work")
    assert [h.id for h in hits][:2] == [f"n_{ids[0]}", f"n_{ids[3]}"]
    assert all(h.why in ("keyword", "semantic") and 0 < h.score <= 1 for h in hits)
    assert f"n_{ids[1]}" not in {h.id for h in hits}  # nothing about caching
    assert find(conn, fake, "kubernetes helm chart values") == []  # no evidence: nothing at all
    only = find(conn, fake, "deploys", kinds=["pattern"])
    assert [h.id for h in only] == [f"n_{ids[3]}"]
    assert "«" in hits[0].snippet  # keyword hits carry a highlighted snippet


def test_rows_not_yet_embedded_are_found_by_keyword(conn: psycopg.Connection, fake: Runner) -> None:
    ids = seed(conn)
    embed_pending(conn, fake, limit=2)  # half embedded, half still waiting for the worker
    hits = find(conn, fake, "second reviewer on Friday")
    assert hits[0].id == f"n_{ids[3]}" and hits[0].why == "keyword"
    # no embedder at all: keyword only, same notes
    keyword_only = search.search(conn, ["alpha"], "second reviewer on Friday", session_space="alpha")
    assert keyword_only[0].id == f"n_{ids[3]}"


def test_other_spaces_are_invisible_unless_readable(conn: psycopg.Connection, fake: Runner) -> None:
    seed(conn)
    other = notes.remember(conn, BETA, "Beta deploys with Argo CD").lineage
    embed_pending(conn, fake)
    assert f"n_{other}" not in {h.id for h in find(conn, fake, "Argo CD deploys")}
    assert f"n_{other}" in {h.id for h in find(conn, fake, "Argo CD deploys", spaces=["alpha", "beta"])}


def test_mark_irrelevant_drops_a_note_for_close_queries_only(conn: psycopg.Connection, fake: Runner) -> None:
    ids = seed(conn)
    embed_pending(conn, fake)
    asked = "how do deploys work on Friday"
    assert f"n_{ids[0]}" in {h.id for h in find(conn, fake, asked)}
    vector = fake.query(asked)
    search.mark_irrelevant(conn, ALPHA, ["alpha"], ids[0], asked, vector=vector, model=fake.model)
    assert f"n_{ids[0]}" not in {h.id for h in find(conn, fake, "How do deploys work on Friday?")}
    assert f"n_{ids[3]}" in {h.id for h in find(conn, fake, asked)}  # only that note is dropped
    assert f"n_{ids[0]}" in {h.id for h in find(conn, fake, "make ship command")}  # unrelated query
    # without vectors (embedder down) the lexemes of the query decide
    plain = search.search(conn, ["alpha"], "deploys work Friday", session_space="alpha")
    assert f"n_{ids[0]}" not in {h.id for h in plain}
    # another space's sessions are not affected by alpha's feedback
    rows = conn.execute("SELECT space, note, embedding_model FROM irrelevant").fetchall()
    assert rows == [("alpha", ids[0], "fake-64")]
    with pytest.raises(NotFound):
        search.mark_irrelevant(conn, ALPHA, ["alpha"], 999, asked, vector=None, model=None)


def test_edges_within_a_space_and_expansion(conn: psycopg.Connection, fake: Runner) -> None:
    ids = seed(conn)
    embed_pending(conn, fake)
    edge = graph.link(conn, ALPHA, ["alpha"], ids[0], "depends_on", ids[2])
    assert edge.created and edge.describe() == f"n_{ids[0]} depends_on n_{ids[2]}"
    assert not graph.link(conn, ALPHA, ["alpha"], ids[0], "depends_on", ids[2]).created
    hits = find(conn, fake, "make ship")
    linked = [h for h in hits if h.why == "linked"]
    assert hits[0].id == f"n_{ids[0]}"
    assert [(h.id, h.via) for h in linked] == [(f"n_{ids[2]}", f"n_{ids[0]} depends_on this")]
    assert find(conn, fake, "make ship", expand=False)[-1].why != "linked"
    assert [e.relation for e in graph.edges_of(conn, ["alpha"], ids[2])] == ["depends_on"]


def test_edges_never_cross_spaces(conn: psycopg.Connection) -> None:
    a = notes.remember(conn, ALPHA, "alpha note").lineage
    b = notes.remember(conn, BETA, "beta note").lineage
    with pytest.raises(Refused, match="never cross spaces"):
        graph.link(conn, ALPHA, ["alpha", "beta"], a, "relates_to", b)
    with pytest.raises(NotFound):
        graph.link(conn, ALPHA, ["alpha"], a, "relates_to", b)  # beta is not even readable
    with pytest.raises(InvalidInput, match="Unknown relation"):
        graph.link(conn, ALPHA, ["alpha"], a, "likes", a + 5)
    with pytest.raises(InvalidInput, match="itself"):
        graph.link(conn, ALPHA, ["alpha"], a, "refines", a)
    with pytest.raises(psycopg.errors.ForeignKeyViolation):  # the database guarantees it too
        conn.execute(
            "INSERT INTO edges (space, from_note, relation, to_note, source) "
            "VALUES ('alpha', %s, 'blocks', %s, 'x')",
            (a, b),
        )
    conn.rollback()
    assert conn.execute("SELECT count(*) FROM edges").fetchone() == (0,)


def test_reindex_fills_and_switches_models(conn: psycopg.Connection, fake: Runner) -> None:
    ids = seed(conn)
    seen: list[tuple[int, int]] = []
    assert reindex(conn, fake, progress=lambda d, t: seen.append((d, t)), batch=3) == 4
    assert seen == [(3, 4), (4, 4)]
    assert reindex(conn, fake) == 0  # all current
    assert reindex(conn, fake, everything=True) == 4
    conn.execute("UPDATE notes SET embedding_model = 'old-model' WHERE lineage = %s", (ids[0],))
    conn.commit()
    assert reindex(conn, fake) == 1
    models = {m for (m,) in conn.execute("SELECT embedding_model FROM notes")}
    assert models == {"fake-64"}


def test_worker_embeds_soon_and_outlives_a_broken_embedder(db_url: str, conn: psycopg.Connection) -> None:
    @contextmanager
    def connect() -> Iterator[psycopg.Connection]:
        with psycopg.connect(db_url) as c:
            yield c

    notes.remember(conn, ALPHA, "first note")
    broken = Worker(connect, Runner({"LORE_EMBEDDER": "broken"}), poll=0.05)
    broken.start()
    time.sleep(0.3)
    broken.stop()
    assert conn.execute("SELECT count(*) FROM notes WHERE embedding IS NULL").fetchone() == (1,)
    conn.commit()
    worker = Worker(connect, Runner({"LORE_EMBEDDER": "fake"}), poll=5)
    worker.start()
    worker.poke()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and worker.embedded < 1:
        time.sleep(0.02)
    worker.stop()
    assert worker.embedded == 1
    row = conn.execute("SELECT embedding_model, vector_dims(embedding) FROM notes").fetchone()
    assert row == ("fake-64", 64)


def test_worker_waits_quietly_for_a_stopped_database(caplog: pytest.LogCaptureFixture) -> None:
    """`lore db stop` under a running server: the worker's pool times out. It says it waits, in
    one line, and never logs a traceback (the server's log is what a user reads)."""
    calls: list[int] = []

    @contextmanager
    def connect() -> Iterator[psycopg.Connection]:
        calls.append(1)
        raise psycopg_pool.PoolTimeout("couldn't get a connection after 3.00 sec")
        yield  # pragma: no cover

    worker = Worker(connect, Runner({"LORE_EMBEDDER": "fake"}), poll=0.01)
    with caplog.at_level("INFO", logger="lore"):
        worker.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not calls:
            time.sleep(0.01)
        worker.stop()
    assert calls
    waits = [r for r in caplog.records if "waits for the database" in r.getMessage()]
    assert waits and all(r.exc_info is None for r in caplog.records), caplog.text
    assert "Traceback" not in caplog.text


def test_keyword_pool_is_bounded_and_keeps_every_word_matches(conn: psycopg.Connection) -> None:
    common = [
        notes.remember(conn, ALPHA, f"deploy note number {i} about nothing else").lineage for i in range(30)
    ]
    best = [notes.remember(conn, ALPHA, f"deploy with the helm chart, take {i}").lineage for i in range(3)]
    # a pool smaller than the matches: rows holding every word are taken first, then any word
    small = search.keyword_candidates(conn, ["alpha"], "deploy helm chart", model=None, pool=10, depth=5)
    assert {c.lineage for c in small[:3]} == set(best) and len(small) == 5
    # a pool that holds every match ranks them all, exactly
    everything = search.keyword_candidates(
        conn, ["alpha"], "deploy helm chart", model=None, pool=1000, depth=50
    )
    assert {c.lineage for c in everything} == set(common) | set(best)
    assert [c.lineage for c in everything[:3]] == sorted(best, reverse=True)
    assert search.keyword_candidates(conn, ["alpha"], "the of and", model=None) == []  # stopwords only


def test_kind_and_tag_filters_apply_to_both_lists(conn: psycopg.Connection, fake: Runner) -> None:
    ops = notes.remember(conn, ALPHA, "Rotate the TLS certificates monthly", kind="devenv", tags=["ops"])
    app = notes.remember(
        conn, ALPHA, "TLS certificates are pinned in the app", kind="decision", tags=["mobile"]
    )
    embed_pending(conn, fake)
    assert {h.id for h in find(conn, fake, "TLS certificates")} == {f"n_{ops.lineage}", f"n_{app.lineage}"}
    assert [h.id for h in find(conn, fake, "TLS certificates", tags=["ops"])] == [f"n_{ops.lineage}"]
    assert [h.id for h in find(conn, fake, "TLS certificates", kinds=["decision"])] == [f"n_{app.lineage}"]
    assert find(conn, fake, "TLS certificates", tags=["ops"], kinds=["decision"]) == []


def test_iterative_scans_are_asked_for_where_pgvector_has_them(
    conn: psycopg.Connection, fake: Runner
) -> None:
    """pgvector 0.8+: the vector half keeps walking the index until enough rows pass the filters;
    older pgvector has no such setting (and refuses it): the search works, with ef_search widened."""
    seed(conn)
    embed_pending(conn, fake)
    conn.commit()
    version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    assert version is not None
    conn.commit()  # the block below is a transaction of its own, not a savepoint
    newer = tuple(int(x) for x in version[0].split(".")[:2]) >= (0, 8)
    vector = fake.query("deploy")
    assert vector is not None
    assert fake.model is not None
    with conn.transaction():
        found = search.vector_candidates(conn, ["alpha"], vector, model=fake.model, depth=30)
        settings = conn.execute(
            "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan', true)"
        ).fetchone()
    assert found, "the vector half found nothing"
    assert settings == ("60", "relaxed_order" if newer else None)
    after = conn.execute("SELECT current_setting('hnsw.iterative_scan', true)").fetchone()
    assert after == ("off" if newer else None,)  # set for that transaction only
