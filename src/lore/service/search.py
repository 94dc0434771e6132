"""Searching notes and shaping what search finds: `search_notes` (and the web UI's search), linking
two notes, marking a note irrelevant to a query, re-embedding in bulk.

A search runs both halves at once: the query's embedding is made under a deadline while the keyword
half runs in PostgreSQL, the vector half as soon as the vector is there (two pooled connections at
most, each briefly), then fusion and the similarity floor (lore.store.search). An embedder that is
down turns a search into a keyword search, never into an error or a wait.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import psycopg

from lore.core import ranking, validate
from lore.core.ranking import Hit
from lore.core.rows import Note
from lore.core.session import Who
from lore.embeddings.runner import Runner
from lore.service.retrieval import query_vector, retrieval, second_vector
from lore.service.runtime import Runtime, first_error
from lore.store import graph, injections, notes, search, vectors

MAX_QUERY = 1_000
MAX_RESULTS = 20


@dataclass(frozen=True)
class Query:
    """A search, checked: its text, the caller's space (its rejections apply), the filters."""

    text: str
    session_space: str
    kinds: list[str] | None
    tags: list[str] | None
    limit: int


async def search_notes(
    rt: Runtime,
    readable: Sequence[str],
    query: object,
    *,
    session_space: str,
    kinds: Sequence[object] | None = None,
    tags: Sequence[object] | None = None,
    limit: object = 5,
    client: str | None = None,
    trace: ranking.Trace | None = None,
    collapse: bool = True,
) -> list[Hit]:
    """Notes of `readable` spaces matching `query`, best first, at most `limit` (1-20). `client`: an
    agent's search, whose results count in the usage of each note (`retrievals`); `trace`: filled
    with what the search saw (`explain`); `collapse`: near duplicates shown once (the best ranked,
    naming the others)."""
    checked = _query(query, session_space, kinds, tags, limit)
    hits = await _find(rt, readable, checked, trace, collapse=collapse)
    if client is not None and hits and session_space:
        returned = [h.id for h in hits]
        await rt.run(lambda c: injections.returned(c, session_space, client, returned))
    return hits


def _query(
    query: object,
    session_space: str,
    kinds: Sequence[object] | None,
    tags: Sequence[object] | None,
    limit: object,
) -> Query:
    q = validate.text(query, "query", max_chars=MAX_QUERY)
    assert q is not None
    return Query(
        q,
        session_space,
        [validate.search_kind(k) for k in kinds] if kinds else None,
        validate.tags(tags) or None,
        validate.limit(limit, "limit", 1, MAX_RESULTS),
    )


@dataclass(frozen=True)
class Explanation:
    """A search and why it found what it found: the hits, every candidate of both lists with its
    ranks, scores and fate, the threshold, and the notes of the person's other spaces that matched
    (never searched from here: this workspace's session does not read those spaces)."""

    hits: list[Hit]
    rows: list[ranking.Explained]
    floor: float
    min_similarity: float
    other_spaces: list[tuple[str, str]]  # (note id, space) found only in spaces not read here


async def explain(
    rt: Runtime,
    readable: Sequence[str],
    query: object,
    *,
    session_space: str,
    others: Sequence[str] = (),
    kinds: Sequence[object] | None = None,
    limit: object = 5,
) -> Explanation:
    """The same search as search_notes (the same code, traced), and the keyword matches in `others`
    (the caller's spaces this session does not read), each dropped as "other space"."""
    trace = ranking.Trace()
    hits = await search_notes(
        rt, readable, query, session_space=session_space, kinds=kinds, limit=limit, trace=trace
    )
    elsewhere: list[tuple[str, str]] = []
    outside = [s for s in others if s not in readable]
    if outside:
        checked = _query(query, session_space, kinds, None, limit)
        found = await rt.run(
            lambda c: search.keyword_part(
                c, outside, checked.text, model=None, kinds=checked.kinds, tags=None
            )
        )
        spaces = await rt.run(lambda c: notes.spaces_of(c, [x.lineage for x in found.candidates]))
        elsewhere = [
            (f"n_{lineage}", spaces.get(lineage, "?")) for lineage in (x.lineage for x in found.candidates)
        ]
    return explained(hits, trace, elsewhere)


def explained(
    hits: list[Hit], trace: ranking.Trace, elsewhere: Sequence[tuple[str, str]] = ()
) -> Explanation:
    """A traced search's hits, and why (what `trace` saw)."""
    return Explanation(hits, ranking.explain(trace), trace.floor, trace.min_similarity, list(elsewhere))


async def _find(
    rt: Runtime,
    readable: Sequence[str],
    q: Query,
    trace: ranking.Trace | None = None,
    *,
    collapse: bool = True,
) -> list[Hit]:
    """Both halves at once, then fusion (lore.store.search.search)."""
    runner = retrieval(rt).runner
    spaces = list(readable)

    async def vector_half() -> tuple[list[float] | None, str | None, list[ranking.Candidate]]:
        vector, model = await query_vector(rt, q.text)
        if vector is None or model is None:
            return None, None, []
        nearest = await rt.run(
            lambda c: search.vector_candidates(c, spaces, vector, model=model, kinds=q.kinds, tags=q.tags)
        )
        return vector, model, nearest

    async def second_half() -> tuple[list[ranking.Candidate], float]:
        vector, model = await second_vector(rt, q.text)
        if vector is None or model is None:
            return [], 1.0
        nearest = await rt.run(
            lambda c: search.vector_candidates(
                c, spaces, vector, model=model, kinds=q.kinds, tags=q.tags, second=True
            )
        )
        return nearest, retrieval(rt).second.min_similarity()

    halves: dict[str, Any] = {}
    try:
        async with anyio.create_task_group() as tasks:

            async def run_vector_half() -> None:
                halves["vector"] = await vector_half()

            async def run_second_half() -> None:
                halves["second"] = await second_half()

            tasks.start_soon(run_vector_half)
            tasks.start_soon(run_second_half)
            halves["keyword"] = await rt.run(
                lambda c: search.keyword_part(
                    c, spaces, q.text, model=runner.model, kinds=q.kinds, tags=q.tags
                )
            )
    except BaseExceptionGroup as group:
        raise first_error(group) from None
    vector, model, nearest = halves["vector"]
    second, second_min = halves["second"]
    found = Halves(halves["keyword"], vector, model, nearest, second, second_min)
    return await rt.run(lambda c: _fused(c, spaces, q, found, runner.min_similarity(), trace, collapse))


@dataclass(frozen=True)
class Halves:
    """What both halves of a search found, before fusion: the keyword half's part, and each model's
    query vector (None: no vector in time) with its nearest candidates."""

    keyword: search.KeywordPart
    vector: list[float] | None
    model: str | None
    nearest: list[ranking.Candidate]
    second: list[ranking.Candidate]
    second_min: float


def _fused(
    conn: psycopg.Connection,
    spaces: list[str],
    q: Query,
    halves: Halves,
    floor: float,
    trace: ranking.Trace | None,
    collapse: bool,
) -> list[Hit]:
    return search.search(
        conn,
        spaces,
        q.text,
        session_space=q.session_space,
        vector=halves.vector,
        model=halves.model,
        min_similarity=floor,
        kinds=q.kinds,
        tags=q.tags,
        limit=q.limit,
        keyword=halves.keyword,
        nearest=halves.nearest,
        trace=trace,
        collapse=collapse,
        second=halves.second,
        second_min=halves.second_min,
    )


@dataclass(frozen=True)
class Prepared:
    """A search checked, and its query embedded by each model (None: no vector in time): all that
    comes before the database (`prepare`), so that `found` reads in one transaction."""

    query: Query
    vector: tuple[list[float] | None, str | None]
    second: tuple[list[float] | None, str | None]


async def prepare(
    rt: Runtime,
    query: object,
    *,
    session_space: str,
    kinds: Sequence[object] | None = None,
    limit: object = 5,
) -> Prepared:
    """A search's query checked and embedded (both models at once), before it reads anything."""
    checked = _query(query, session_space, kinds, None, limit)
    vectors: dict[str, tuple[list[float] | None, str | None]] = {}
    try:
        async with anyio.create_task_group() as tasks:

            async def second_half() -> None:
                vectors["second"] = await second_vector(rt, checked.text)

            tasks.start_soon(second_half)
            vectors["first"] = await query_vector(rt, checked.text)
    except BaseExceptionGroup as group:
        raise first_error(group) from None
    return Prepared(checked, vectors["first"], vectors["second"])


def found(
    rt: Runtime, readable: Sequence[str], prepared: Prepared, trace: ranking.Trace | None = None
) -> list[Hit]:
    """search_notes' search (the same halves and fusion, one after the other) in one transaction, its
    query embedded beforehand (`prepare`): for a page that reads what else it shows in the same one
    (the web UI's Notes page). No usage is counted: a person searched, not an agent."""
    q, spaces = prepared.query, list(readable)
    (vector, model), (second, second_model) = prepared.vector, prepared.second
    runner = retrieval(rt).runner

    def read(conn: psycopg.Connection) -> list[Hit]:
        part = search.keyword_part(conn, spaces, q.text, model=runner.model, kinds=q.kinds, tags=q.tags)
        nearest, others, second_min = [], [], 1.0
        if vector is not None and model is not None:
            nearest = search.vector_candidates(conn, spaces, vector, model=model, kinds=q.kinds, tags=q.tags)
        if second is not None and second_model is not None:
            others = search.vector_candidates(
                conn, spaces, second, model=second_model, kinds=q.kinds, tags=q.tags, second=True
            )
            second_min = retrieval(rt).second.min_similarity()
        halves = Halves(part, vector, model, nearest, others, second_min)
        return _fused(conn, spaces, q, halves, runner.min_similarity(), trace, True)

    return rt.transact(read)


@dataclass(frozen=True)
class Neighbourhood:
    """A note's links (both directions), the notes at their other ends, and its versions."""

    edges: list[graph.Edge]
    neighbours: dict[int, Note]
    versions: list[Note]


def neighbourhood(rt: Runtime, readable: Sequence[str], note: Note) -> Neighbourhood:
    def load(conn: psycopg.Connection) -> Neighbourhood:
        edges = graph.edges_of(conn, [note.space], note.lineage)
        others = sorted({e.to_note if e.from_note == note.lineage else e.from_note for e in edges})
        return Neighbourhood(
            edges, notes.current(conn, readable, others), notes.history(conn, readable, note.lineage)
        )

    return rt.transact(load)


def link_notes(rt: Runtime, who: Who, from_id: object, relation: object, to_id: object) -> graph.Edge:
    """Link two notes of the caller's space: from -relation-> to (again: a no-op that says so)."""
    _, source = validate.item_id(from_id, expect="n")
    _, target = validate.item_id(to_id, expect="n")
    rel = graph.relation(relation)
    return rt.transact(lambda c: graph.link(c, who.origin, who.readable, source, rel, target))


async def mark_irrelevant(rt: Runtime, who: Who, note_id: object, query: object) -> tuple[int, str]:
    """Searches close to `query` leave the note out from now on. Returns (note lineage, query)."""
    _, lineage = validate.item_id(note_id, expect="n")
    q = validate.text(query, "query", max_chars=MAX_QUERY)
    assert q is not None
    vector, model = await query_vector(rt, q)
    await rt.run(
        lambda c: search.mark_irrelevant(c, who.origin, who.readable, lineage, q, vector=vector, model=model)
    )
    return lineage, q


def reindex(
    rt: Runtime, runner: Runner, *, everything: bool, progress: Callable[[int, int], None] | None = None
) -> int:
    """Embed every current note without a vector of `runner`'s model (`everything`: re-embed all),
    after giving every note written in a session its context (`everything`: made again)."""
    return rt.transact(lambda c: vectors.reindex(c, runner, everything=everything, progress=progress))


def reindex_second(rt: Runtime, runner: Runner, *, everything: bool) -> int:
    """The same for the second model's vectors, when one is installed (0 without)."""
    if runner.embedder is None:
        return 0
    from lore.store import second_vectors

    return rt.transact(lambda c: second_vectors.reindex(c, runner, everything=everything))
