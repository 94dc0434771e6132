"""Embedding in the background: writes never wait for (or fail on) the embedder.

A note commits without a vector. The worker thread in `lore mcp` / `lore serve` picks up current
rows that have none and fills them in small batches (lore.store.vectors; the second model's,
lore.store.second_vectors). It sleeps POLL_S between looks (a write in the same process wakes it at
once), backs off while the embedder is down, and loads no model until some row needs a vector: an
idle server stays small.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

import psycopg

from lore.core.config import EmbedderSettings
from lore.core.errors import LoreError
from lore.core.redact import redact
from lore.embeddings import EmbedderError
from lore.embeddings.runner import Runner
from lore.store import context, keywords, second_vectors
from lore.store.vectors import embed_pending

log = logging.getLogger("lore.embed")

POLL_S = 2.0
MAX_BACKOFF_S = 300.0


class Worker:
    """The background thread of one server process."""

    def __init__(
        self,
        connect: Callable[[], Any],
        runner: Runner,
        *,
        poll: float = POLL_S,
        second: Runner | None = None,
    ) -> None:
        self._connect = connect  # returns a context manager yielding a connection (a pool's)
        self.runner = runner
        self.second = second  # the second model's runner (lore.store.second_vectors), if any
        self.poll = poll
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.embedded = 0

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="lore-embed-worker", daemon=True)
            self._thread.start()

    def poke(self) -> None:
        """A note was just written here: look now instead of at the next poll."""
        self._wake.set()

    def stop(self, wait: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(wait)

    def _loop(self) -> None:
        backoff = self.poll
        while not self._stop.is_set():
            try:
                with self._connect() as conn:
                    keywords.compact(conn)  # the term counts (migration 0022), kept current
                    placed = context.fill(conn)
                    count = 0
                    if self.runner.embedder is not None:  # `none`: keyword search only
                        count += embed_pending(conn, self.runner)
                    if self.second is not None and self.second.embedder is not None:
                        count += second_vectors.embed_pending(conn, self.second)
                self.embedded += count
                backoff = self.poll
                if count or placed:
                    continue
            except EmbedderError as exc:
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 5.0))
                log.warning("embedding later (retry in %.0f s): %s", backoff, exc.message)
            except (LoreError, psycopg.OperationalError) as exc:  # stopped (`lore db stop`), restarted, down
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 5.0))
                why = exc.message if isinstance(exc, LoreError) else redact(str(exc))
                log.info(
                    "embedding worker waits for the database: %s",
                    (why.splitlines() or [type(exc).__name__])[0],
                )
            except Exception:  # never let the worker die; the next round retries
                backoff = min(MAX_BACKOFF_S, max(backoff * 2, 5.0))
                log.exception("embedding worker error")
            self._wake.wait(backoff)
            self._wake.clear()


class Retrieval:
    """Per server process: the embedder runner (query vectors) and the background worker."""

    def __init__(
        self, env: Mapping[str, str], settings: EmbedderSettings, connect: Callable[[], Any]
    ) -> None:
        from lore.embeddings import second

        self.runner = Runner(env, settings)
        self.second = Runner(env, settings, choose=second)
        poll = float(env.get("LORE_EMBED_POLL", POLL_S))
        self.worker = Worker(connect, self.runner, poll=poll, second=self.second)

    def close(self) -> None:
        self.worker.stop()
        self.runner.close()
        self.second.close()


def settings_for(load: Callable[[], Any]) -> EmbedderSettings:
    try:
        settings = load().embedder
    except LoreError:
        return EmbedderSettings()
    return settings if isinstance(settings, EmbedderSettings) else EmbedderSettings()
