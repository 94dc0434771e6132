"""Retrieval through real stdio MCP sessions: writes never wait for the embedder (down or stuck),
the background worker embeds soon after, and link_notes / mark_irrelevant work end to end."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import psycopg
import pytest
from support.mcpclient import call, lore_session, ok, text

pytestmark = pytest.mark.anyio


@pytest.fixture
def project(tmp_path: Path, lore_env: dict[str, str]) -> Path:
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "alpha"\npaths = ["{alpha}"]\n\n[[space]]\nid = "beta"\npaths = ["{beta}"]\n'
        f'reads_from = ["alpha"]\n'
    )
    return alpha


def embedded(conn: psycopg.Connection) -> int:
    conn.commit()
    row = conn.execute("SELECT count(*) FROM notes WHERE embedding IS NOT NULL").fetchone()
    return int(row[0]) if row else 0


@pytest.mark.parametrize("embedder", ["broken", "hang"])
async def test_writes_and_search_survive_an_embedder_outage(
    embedder: str, project: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    # A call that waits for the embedder waits its timeout (3 s here): a floor, however busy this shared
    # 2-core machine is. A fact's write waits at most LORE_WRITE_EMBED_TIMEOUT for its own vector (0.5 s
    # here; issue 40), a note's not at all, so "< 3 s" tells them apart with room for a loaded machine;
    # the search's bound (timeout + 7 s) only says it did not hang.
    timeout = 3.0
    env = {
        **lore_env,
        "LORE_EMBEDDER": embedder,
        "LORE_EMBED_POLL": "0.1",
        "LORE_EMBED_TIMEOUT": f"{timeout}",
        "LORE_WRITE_EMBED_TIMEOUT": "0.5",
    }
    async with lore_session(env, cwd=project) as s:
        started = time.monotonic()
        await ok(s, "remember_note", body="Rotate the signing keys every 90 days", title="Key rotation")
        await ok(s, "remember_fact", statement="a fact is written whatever the embedder does")
        wrote = time.monotonic() - started
        started = time.monotonic()
        found = await ok(s, "search_notes", query="signing key rotation")
        searched = time.monotonic() - started
        assert text(found).startswith("n_1 [note] Key rotation") and "keyword" in text(found)
        again = await ok(s, "search_notes", query="rotate keys")  # a stuck lane fails fast
        assert "n_1" in text(again)
    assert wrote < timeout, f"a write waited {wrote:.1f} s for the {embedder} embedder"
    assert searched < timeout + 7
    assert embedded(conn) == 0  # nothing was half-written; the row waits for a working embedder
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (1,)


async def test_worker_embeds_after_the_write_and_search_goes_hybrid(
    project: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    env = {**lore_env, "LORE_EMBEDDER": "fake"}
    async with lore_session(env, cwd=project) as s:
        for body in ("Deploys go out with make ship", "Caches expire after 15 minutes"):
            await ok(s, "remember_note", body=body)
        with anyio.fail_after(10):
            while embedded(conn) < 2:
                await anyio.sleep(0.05)
        result = await ok(s, "search_notes", query="how do deploys go out")
        hits = result.structured_content["results"]
        assert hits[0]["id"] == "n_1"
        assert set(hits[0]) == {"id", "kind", "snippet", "score", "why"}  # no title was given
        assert [h["id"] for h in hits] == ["n_1"]  # the caching note is under the threshold
    rows = conn.execute("SELECT embedding_model, vector_dims(embedding) FROM notes").fetchall()
    assert rows == [("fake-64", 64), ("fake-64", 64)]


async def test_link_and_mark_irrelevant_through_mcp(
    project: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    env = {**lore_env, "LORE_EMBEDDER": "fake"}
    async with lore_session(env, cwd=project) as s:
        names = [t.name for t in (await s.list_tools()).tools]
        assert names[3] == "search_notes" and names.index("link_notes") == 6
        assert names.index("mark_irrelevant") == 7
        await ok(s, "remember_note", body="Releases are cut from main every Tuesday", title="Release train")
        await ok(
            s, "remember_note", body="The changelog is generated from commit messages", title="Changelog"
        )
        linked = await ok(s, "link_notes", **{"from": "n_1", "relation": "depends_on", "to": "n_2"})
        assert text(linked) == "Linked: n_1 depends_on n_2."
        again = await ok(s, "link_notes", **{"from": "n_1", "relation": "depends_on", "to": "n_2"})
        assert text(again).startswith("Already linked")
        bad = await call(s, "link_notes", **{"from": "n_1", "relation": "loves", "to": "n_2"})
        assert bad.is_error and "depends_on, blocks" in text(bad)
        hits = text(await ok(s, "search_notes", query="when are releases cut"))
        assert hits.splitlines()[0].startswith("n_1 [note] Release train")
        assert "n_2 [note] Changelog" in hits and "linked: n_1 depends_on this" in hits
        await ok(s, "mark_irrelevant", note_id="n_1", query="when are releases cut")
        assert "n_1 " not in text(await ok(s, "search_notes", query="When are releases cut?"))
        assert "n_1 " in text(await ok(s, "search_notes", query="Tuesday release train from main"))
        missing = await call(s, "mark_irrelevant", note_id="n_99", query="x")
        assert missing.is_error and "No note n_99" in text(missing)
    async with lore_session(env, cwd=project.parent / "beta") as b:
        await ok(b, "remember_note", body="beta note")
        crossed = await call(b, "link_notes", **{"from": "n_3", "relation": "relates_to", "to": "n_1"})
        assert crossed.is_error and "never cross spaces" in text(crossed)
        # alpha's feedback does not hide n_1 from beta (which reads alpha)
        assert "n_1 " in text(await ok(b, "search_notes", query="when are releases cut"))
    assert conn.execute("SELECT count(*) FROM edges").fetchone() == (1,)
