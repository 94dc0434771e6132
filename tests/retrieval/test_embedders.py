"""Embedding providers: the registry, the two local models on the files their wheels ship, the
OpenAI-compatible client against httpx's MockTransport, and the deadline around every call."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable

import httpx2 as httpx
import pytest

from lore.core.config import EmbedderSettings
from lore.core.errors import ConfigError
from lore.embeddings import EmbedderError, load
from lore.embeddings.remote import OpenAICompatible
from lore.embeddings.runner import Runner


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError) as err:
        load({"LORE_EMBEDDER": "word2vec"})
    assert "local, static, openai, e5, none" in str(err.value)


def test_env_beats_config_and_none_means_keyword_only() -> None:
    embedder = load({"LORE_EMBEDDER": "fake"}, EmbedderSettings(name="static"))
    assert embedder is not None
    assert embedder.model == "fake-64"
    assert load({}, EmbedderSettings(name="none")) is None
    assert Runner({"LORE_EMBEDDER": "none"}).query("anything") is None


@pytest.mark.parametrize(("name", "dim"), [("local", 384), ("static", 256)])
def test_local_models_from_their_wheels(name: str, dim: int) -> None:
    embedder = load({"LORE_EMBEDDER": name})
    assert embedder is not None
    a, b, c = embedder.embed(
        [
            "The deploy pipeline retries failed releases three times",
            "How many times does a failed release get retried?",
            "My grandmother bakes bread on Sundays",
        ]
    )
    assert len(a) == dim and math.isclose(cos(a, a), 1.0, abs_tol=1e-4)
    assert cos(a, b) > cos(a, c) + 0.2
    assert embedder.embed([]) == []


def _mock(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.MockTransport:
    return httpx.MockTransport(handler)


def test_openai_compatible_request_and_answer() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        data = [
            {"index": i, "embedding": [3.0, 4.0] if i == 0 else [0.0, 2.0]} for i in range(len(body["input"]))
        ]
        return httpx.Response(200, json={"data": list(reversed(data)), "model": body["model"]})

    client = OpenAICompatible(
        "nomic-embed-text", base_url="http://127.0.0.1:11434/v1/", api_key="sk-test", transport=_mock(handler)
    )
    vectors = client.embed(["first", "second"])
    assert vectors == [[0.6, 0.8], [0.0, 1.0]]  # ordered by index, unit length
    assert client.dim == 2 and client.model == "openai:nomic-embed-text"
    request = seen[0]
    assert str(request.url) == "http://127.0.0.1:11434/v1/embeddings"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {"model": "nomic-embed-text", "input": ["first", "second"]}
    client.close()


@pytest.mark.parametrize(
    ("response", "expect"),
    [
        (httpx.Response(401, text="bad key"), "HTTP 401"),
        (httpx.Response(200, json={"nope": []}), "not OpenAI-shaped"),
        (httpx.Response(200, json={"data": [{"index": 0, "embedding": [1.0]}]}), r"1 vectors for 2 texts"),
    ],
)
def test_openai_compatible_failures_are_embedder_errors(response: httpx.Response, expect: str) -> None:
    client = OpenAICompatible("m", transport=_mock(lambda request: response))
    with pytest.raises(EmbedderError, match=re.escape(expect)):
        client.embed(["a", "b"])
    client.close()


def test_openai_compatible_unreachable_and_settings() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    client = OpenAICompatible("m", transport=_mock(refuse))
    with pytest.raises(EmbedderError, match="did not answer"):
        client.embed(["a"])
    client.close()
    with pytest.raises(EmbedderError, match="needs a model"):
        load({"LORE_EMBEDDER": "openai"})
    settings = EmbedderSettings(model="text-embedding-3-small", api_key_env="MY_KEY", dimensions=256)
    made = load({"LORE_EMBEDDER": "openai", "MY_KEY": "k"}, settings)
    assert made is not None and made.model == "openai:text-embedding-3-small:256" and made.dim == 256


def test_runner_bounds_a_hanging_embedder_and_survives_a_broken_one() -> None:
    # A wait for the timeout is a floor (at least 1 s however busy this shared 2-core machine is), so
    # "fails at once" is checked as "did not wait the timeout again", not against a small wall-clock
    # figure; the first call's upper bound only says it came back (wide on purpose).
    hang = Runner({"LORE_EMBEDDER": "hang", "LORE_EMBED_TIMEOUT": "1"})
    started = time.monotonic()
    assert hang.query("q") is None
    assert 0.9 <= time.monotonic() - started < 10
    started = time.monotonic()
    assert hang.query("q again") is None  # the lane is still stuck: fails at once
    assert time.monotonic() - started < 1.0
    with pytest.raises(EmbedderError, match=r"did not answer|busy"):
        hang.batch(["x"], timeout=0.2)
    hang.close(wait=0.1)
    broken = Runner({"LORE_EMBEDDER": "broken"})
    assert broken.query("q") is None
    with pytest.raises(EmbedderError, match="always fails"):
        broken.batch(["x"])
    fake = Runner({"LORE_EMBEDDER": "fake"})
    assert fake.query("q") == fake.batch(["q"])[0]
    assert fake.min_similarity() == 0.45


def test_a_batch_gives_each_text_the_vector_it_gets_alone() -> None:
    """Texts of mixed lengths, out of order: grouped by padded tokens, each answer stays in its place."""
    embedder = load({"LORE_EMBEDDER": "local"})
    assert embedder is not None
    texts = [f"note {i}: " + "the release train leaves on tuesdays " * (i % 9 * 7) for i in range(40)]
    together = embedder.embed(texts)
    for i in (0, 5, 17, 26, 39):
        alone = embedder.embed([texts[i]])[0]
        assert math.isclose(cos(together[i], alone), 1.0, abs_tol=1e-4), i


def test_batches_stay_within_the_token_budget() -> None:
    from lore.embeddings.local import batches

    assert batches([]) == []
    assert batches([10] * 40, most=16, tokens=512) == [
        list(range(16)),
        list(range(16, 32)),
        list(range(32, 40)),
    ]
    assert batches([200, 250, 256, 600, 30], most=16, tokens=512) == [[0, 1], [2], [3], [4]]
    lengths = [5, 40, 7, 300, 2, 64, 64, 128]
    groups = batches(lengths, most=4, tokens=256)
    assert [k for g in groups for k in g] == list(range(len(lengths)))
    assert all(len(g) == 1 or len(g) * max(lengths[k] for k in g) <= 256 for g in groups)
    assert all(len(g) <= 4 for g in groups)
