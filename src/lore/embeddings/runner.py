"""Calls into an embedder with a deadline, off the caller's thread.

A provider may be slow, down or stuck (a remote endpoint, a model that fails to load). Callers
never wait past their deadline: a query embedding that misses it means "search by keyword now",
a batch that misses it means "the worker retries later". Each call runs on a daemon thread (a stuck
one never keeps the process from exiting); while a stuck call still occupies a lane, new calls on
that lane fail at once instead of piling up threads.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from lore.core.config import EmbedderSettings
from lore.embeddings import Embedder, EmbedderError, load, min_similarity

log = logging.getLogger("lore.embeddings")

QUERY_TIMEOUT_S = 5.0  # the first query also loads the model (~0.5 s for `local`)
BATCH_TIMEOUT_S = 120.0


class Runner:
    """One embedder, loaded on first use, with a query lane and a batch lane."""

    def __init__(
        self,
        env: Mapping[str, str],
        settings: EmbedderSettings | None = None,
        *,
        choose: Callable[[Mapping[str, str], EmbedderSettings], Embedder | None] = load,
    ) -> None:
        self.env = env
        self.settings = settings or EmbedderSettings()
        self._choose = choose  # `lore.embeddings.second` for the second model's runner
        self._embedder: Embedder | None = None
        self._resolved = False
        self._lock = threading.Lock()
        self._busy: dict[str, Future[list[list[float]]]] = {}
        self.query_timeout = float(env.get("LORE_EMBED_TIMEOUT", QUERY_TIMEOUT_S))

    @property
    def embedder(self) -> Embedder | None:
        """None when the configured embedder is `none`. Resolving it loads no model."""
        with self._lock:
            if not self._resolved:
                self._embedder = self._choose(self.env, self.settings)
                self._resolved = True
            return self._embedder

    @property
    def model(self) -> str | None:
        embedder = self.embedder
        return embedder.model if embedder is not None else None

    def min_similarity(self) -> float:
        return min_similarity(self.model or "", self.settings)

    def query(self, text: str) -> list[float] | None:
        """The query's vector, or None (no embedder, down, or too slow): search by keyword."""
        if self.embedder is None:
            return None
        try:
            return self._call("query", [text], self.query_timeout)[0]
        except EmbedderError as exc:
            log.warning("query embedding unavailable, keyword only: %s", exc.message)
            return None

    def batch(self, texts: Sequence[str], timeout: float = BATCH_TIMEOUT_S) -> list[list[float]]:
        """Vectors for texts; raises EmbedderError when the embedder fails or misses the deadline."""
        if self.embedder is None:
            raise EmbedderError("No embedder is configured (`none`).", "Set LORE_EMBEDDER to use vectors.")
        return self._call("batch", list(texts), timeout)

    def soon(self, text: str) -> Callable[[float], list[float] | None]:
        """Start embedding `text` now on the write lane (a write's own vector, made while its
        transaction runs); the function returned waits for it at most that many seconds. Its None:
        no embedder, busy, failed or too slow (the worker embeds the row later)."""
        if self.embedder is None:
            return lambda _: None
        try:
            future = self._begin("write", [text])
        except EmbedderError:
            return lambda _: None

        def wait(timeout: float) -> list[float] | None:
            try:
                return self._wait(future, 1, timeout)[0]
            except EmbedderError as exc:
                log.info("a write's vector comes later: %s", exc.message)
                return None

        return wait

    def _call(self, lane: str, texts: list[str], timeout: float) -> list[list[float]]:
        return self._wait(self._begin(lane, texts), len(texts), timeout)

    def _begin(self, lane: str, texts: list[str]) -> Future[list[list[float]]]:
        embedder = self.embedder
        assert embedder is not None
        with self._lock:
            busy = self._busy.get(lane)
            if busy is not None and not busy.done():
                raise EmbedderError(
                    f"The embedder {embedder.model} is still busy with an earlier call.",
                    "It is slow or stuck; lore keeps using keyword search meanwhile.",
                )
            future: Future[list[list[float]]] = Future()
            self._busy[lane] = future

            ask = getattr(embedder, "embed_query", None) if lane == "query" else None

            def work() -> None:
                try:
                    future.set_result([ask(texts[0])] if callable(ask) else embedder.embed(texts))
                except BaseException as exc:
                    future.set_exception(exc)

            threading.Thread(target=work, name=f"lore-embed-{lane}", daemon=True).start()
        return future

    def _wait(self, future: Future[list[list[float]]], count: int, timeout: float) -> list[list[float]]:
        embedder = self.embedder
        assert embedder is not None
        try:
            vectors = future.result(timeout=timeout)
        except FutureTimeout:
            raise EmbedderError(
                f"The embedder {embedder.model} did not answer within {timeout:g} s.",
                "Notes are stored anyway and embedded later; search uses keywords meanwhile.",
            ) from None
        except EmbedderError:
            raise
        except Exception as exc:  # a provider bug must not take a tool call down with it
            message = f"The embedder {embedder.model} failed: {exc!r}"
            raise EmbedderError(message, "See the server log.") from exc
        if len(vectors) != count:
            raise EmbedderError(f"The embedder returned {len(vectors)} vectors for {count} texts.", "")
        return vectors

    def close(self, wait: float = 2.0) -> None:
        """Let calls in flight finish (bounded): a native runtime torn down under a running
        inference aborts the process. A stuck call is left behind (its thread is a daemon)."""
        with self._lock:
            busy = [f for f in self._busy.values() if not f.done()]
        for future in busy:
            with contextlib.suppress(Exception):
                future.result(timeout=wait)
        embedder = self._embedder
        closer = getattr(embedder, "close", None)
        if callable(closer):
            closer()
