"""Search as every entry point runs it (the `search_notes` tool, the web UI's notes page): the
query's embedding made under a deadline while the keyword half runs in PostgreSQL, the vector half
as soon as the vector is there (two pooled connections at most, each briefly), then fusion.

An embedder that is down or stuck turns a search into a keyword search, never into an error or a
wait (lore.embeddings.runner). The embedder and the background embedding worker belong to the
process's runtime and are created on first use (no model is loaded until a query needs one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio

from lore.service.runtime import Runtime
from lore.store import search
from lore.store.embed_worker import Retrieval, settings_for


def retrieval(rt: Runtime) -> Retrieval:
    """The process's embedder runner and worker (created on first use; loads no model)."""
    if rt.retrieval is None:
        from lore.core.config import load_config

        rt.retrieval = Retrieval(
            rt.env, settings_for(lambda: load_config(rt.env)), lambda: rt.pool().connection()
        )
    assert isinstance(rt.retrieval, Retrieval)
    return rt.retrieval


def start(rt: Runtime) -> None:
    """Server start-up: begin embedding pending notes in the background."""
    retrieval(rt).worker.start()


def poke(rt: Runtime) -> None:
    """A note was written: embed it now rather than at the next poll."""
    if rt.retrieval is not None:
        rt.retrieval.worker.poke()


async def query_vector(rt: Runtime, text: str) -> tuple[list[float] | None, str | None]:
    runner = retrieval(rt).runner
    vector = await anyio.to_thread.run_sync(runner.query, text)
    return vector, (runner.model if vector is not None else None)


def _first(group: BaseExceptionGroup) -> BaseException:
    """The first error of a task group (a LoreError stays a LoreError for the caller)."""
    inner = group.exceptions[0]
    return _first(inner) if isinstance(inner, BaseExceptionGroup) else inner


async def find(
    rt: Runtime,
    readable: Sequence[str],
    query: str,
    *,
    session_space: str,
    kinds: list[str] | None = None,
    tags: list[str] | None = None,
    limit: int = 5,
) -> list[search.Hit]:
    """Notes of `readable` spaces matching `query` (validated by the caller), best first."""
    runner = retrieval(rt).runner
    spaces = list(readable)

    async def vector_half() -> tuple[list[float] | None, str | None, list[search.Candidate]]:
        vector, model = await query_vector(rt, query)
        if vector is None or model is None:
            return None, None, []
        nearest = await rt.run(
            lambda c: search.vector_candidates(c, spaces, vector, model=model, kinds=kinds, tags=tags)
        )
        return vector, model, nearest

    halves: dict[str, Any] = {}
    try:
        async with anyio.create_task_group() as tasks:

            async def run_vector_half() -> None:
                halves["vector"] = await vector_half()

            tasks.start_soon(run_vector_half)
            halves["keyword"] = await rt.run(
                lambda c: search.keyword_part(c, spaces, query, model=runner.model, kinds=kinds, tags=tags)
            )
    except BaseExceptionGroup as group:
        raise _first(group) from None
    part: search.KeywordPart = halves["keyword"]
    vector, model, nearest = halves["vector"]
    floor = runner.min_similarity()
    return await rt.run(
        lambda c: search.search(
            c,
            spaces,
            query,
            session_space=session_space,
            vector=vector,
            model=model,
            min_similarity=floor,
            kinds=kinds,
            tags=tags,
            limit=limit,
            keyword=part,
            nearest=nearest,
        )
    )
