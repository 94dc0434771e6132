"""`openai`: any OpenAI-compatible `POST {base_url}/embeddings` (OpenAI, Ollama, vLLM, LM Studio...).

Config `[embedder]`: `model` (required), `base_url` (default OpenAI's), `api_key_env` (the NAME of
the environment variable holding the key; the key itself never goes in the config), `dimensions`
(optional, sent when set). The HTTP client is httpx-compatible; tests pass a MockTransport.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from lore.embeddings import EmbedderError, EmbedderSettings

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TIMEOUT_S = 30.0


class OpenAICompatible:
    def __init__(
        self,
        model_name: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        dimensions: int | None = None,
        transport: Any = None,
    ) -> None:
        self._name = model_name
        self._base = base_url.rstrip("/")
        self._key = api_key
        self._dimensions = dimensions
        self._transport = transport
        self._client: Any = None
        self.dim: int | None = dimensions

    @property
    def model(self) -> str:
        return f"openai:{self._name}" + (f":{self._dimensions}" if self._dimensions else "")

    @classmethod
    def from_settings(cls, s: EmbedderSettings, env: Mapping[str, str]) -> OpenAICompatible:
        if not s.model:
            raise EmbedderError(
                "The openai embedder needs a model name.",
                'Add `model = "text-embedding-3-small"` (or your server\'s model) under [embedder].',
            )
        key_env = s.api_key_env or "OPENAI_API_KEY"
        return cls(
            s.model,
            base_url=s.base_url or DEFAULT_BASE_URL,
            api_key=env.get(key_env),
            dimensions=s.dimensions,
        )

    def _http(self) -> Any:
        if self._client is None:
            import httpx2 as httpx

            headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
            self._client = httpx.Client(
                base_url=self._base, headers=headers, timeout=TIMEOUT_S, transport=self._transport
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        payload: dict[str, Any] = {"model": self._name, "input": list(texts)}
        if self._dimensions:
            payload["dimensions"] = self._dimensions
        try:
            response = self._http().post("/embeddings", json=payload)
        except Exception as exc:  # connection refused, timeout, DNS: all mean "down"
            raise EmbedderError(
                f"The embedding endpoint {self._base} did not answer: {type(exc).__name__}.",
                "Check [embedder] base_url and that the server runs; notes are kept and embedded later.",
            ) from exc
        if response.status_code != 200:
            raise EmbedderError(
                f"The embedding endpoint answered HTTP {response.status_code}: {response.text[:200]}",
                "Check [embedder] model and the API key variable named by api_key_env.",
            )
        try:
            items = sorted(response.json()["data"], key=lambda d: d["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbedderError(
                "The embedding endpoint's answer is not OpenAI-shaped (data[].embedding).",
                "Point base_url at an OpenAI-compatible /v1 endpoint.",
            ) from exc
        if len(vectors) != len(texts) or len({len(v) for v in vectors}) != 1:
            raise EmbedderError(
                f"The embedding endpoint returned {len(vectors)} vectors for {len(texts)} texts.",
                "Check the server; lore retries later.",
            )
        if self.dim is None:
            self.dim = len(vectors[0])
        elif len(vectors[0]) != self.dim:
            raise EmbedderError(
                f"The endpoint's vectors have {len(vectors[0])} dimensions, not {self.dim}.",
                "A different model answers under this name: run `lore reindex` after changing models.",
            )
        return [_unit(v) for v in vectors]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector
