"""Embedders for tests: `fake` (deterministic, no model), `broken` (raises), `hang` (never returns).

`fake` hashes lower-cased word stems into 64 buckets, so texts sharing words are close: enough to
exercise ranking, fusion, thresholds and feedback without a model.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence

from lore.embeddings import EmbedderError

_WORD = re.compile(r"[a-z0-9]+")


class Fake:
    model = "fake-64"
    dim: int | None = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [_hashed(t, 64) for t in texts]


def _hashed(text: str, dim: int) -> list[float]:
    vector = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        stem = word[:5]
        digest = hashlib.blake2b(stem.encode(), digest_size=8).digest()
        vector[digest[0] % dim] += 1.0 if digest[1] & 1 else -1.0
        vector[digest[2] % dim] += 0.5
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [1.0 / math.sqrt(dim)] * dim


class Broken:
    model = "broken"
    dim: int | None = 64

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderError("The test embedder `broken` always fails.", "Use another LORE_EMBEDDER.")


class Hang:
    model = "hang"
    dim: int | None = 64

    def __init__(self) -> None:
        self._never = threading.Event()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._never.wait()  # forever: callers must bound their wait
        raise AssertionError("unreachable")
