"""The runtime's half of search: the process's embedder and its background embedding worker,
created on first use (no model is loaded until a query or a row needs one). An embedder that is
down or stuck gives no vector (lore.embeddings.runner), never an error or a wait: search becomes a
keyword search, writes are embedded later. The searches themselves are lore.service.search.
"""

from __future__ import annotations

import anyio

from lore.embeddings.runner import Runner
from lore.service.runtime import Runtime
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
    return await _vector(retrieval(rt).runner, text)


async def second_vector(rt: Runtime, text: str) -> tuple[list[float] | None, str | None]:
    """The query's vector by the second model (lore.embeddings.second), or (None, None) without one."""
    return await _vector(retrieval(rt).second, text)


async def _vector(runner: Runner, text: str) -> tuple[list[float] | None, str | None]:
    """`text`'s query vector by `runner`'s model and that model, or (None, None) without one."""
    if runner.embedder is None:  # none configured: no thread to wait for
        return None, None
    vector = await anyio.to_thread.run_sync(runner.query, text)
    return vector, (runner.model if vector is not None else None)
