"""The write-time check is one rule for every entry point (issue 28): an MCP agent's remember_fact and
remember_note, /api's POST /api/facts (the CLI and the web UI have their own tests): a copy writes
nothing and answers with the existing id; a near duplicate and a likely conflict are written and
named; `supersedes` confirms a replacement, which session starts then leave out. Two sessions
writing the same words at the same moment store them once. Search shows near duplicates once and
ranks older handoffs after everything else."""

from __future__ import annotations

import threading
from functools import partial
from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, bearer, project, push, signed_in, token
from support.mcpclient import lore_session, ok, text

from lore.core import capture
from lore.service import search
from lore.service.runtime import Runtime
from lore.service.session_start import session_start
from lore.store import handoffs

pytestmark = pytest.mark.anyio
__all__ = ["project", "signed_in"]  # fixtures


@pytest.fixture
def work(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "acme"
    folder.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "acme"\npaths = ["{folder}"]\n')
    return folder, lore_env


def count(conn: psycopg.Connection, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table} WHERE superseded_at IS NULL").fetchone()
    assert row is not None
    return int(row[0])


async def test_an_agent_is_told_of_copies_near_duplicates_and_conflicts(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    folder, env = work
    async with lore_session(env, cwd=folder) as s:
        first = await ok(s, "remember_fact", statement="The API listens on port 8080.", subject="acme")
        assert first.structured_content == {"id": "f_1", "space": "acme"}
        again = await ok(s, "remember_fact", statement="the api listens on port 8080", subject="acme")
        assert text(again).startswith("Already remembered as f_1 in space acme")
        assert again.structured_content == {"id": "f_1", "space": "acme", "duplicate": True}
        near = await ok(s, "remember_fact", statement="The API server listens on port 8080", subject="acme")
        assert near.structured_content == {"id": "f_2", "space": "acme", "similar": ["f_1"]}
        moved = await ok(s, "remember_fact", statement="The API listens on port 9090.", subject="acme")
        assert moved.structured_content == {"id": "f_3", "space": "acme", "conflicts": ["f_1", "f_2"]}
        assert 'supersedes="f_1"' in text(moved)
        confirmed = await ok(
            s,
            "remember_fact",
            statement="The API listens on port 9090.",
            subject="acme",
            supersedes="f_1,f_2",
        )
        assert confirmed.structured_content is not None
        assert confirmed.structured_content["superseded"] == ["f_1", "f_2"]
        assert "f_3 replaces f_1, f_2" in text(confirmed)
        wrong = await s.call_tool(
            "remember_fact", {"statement": "Port 9090 it is", "subject": "acme", "supersedes": "n_4"}
        )
        assert wrong.is_error and "not a fact id" in text(wrong)

        note = "How to deploy: run make ship, then watch the dashboard for ten minutes."
        await ok(s, "remember_note", body=note, kind="devenv")
        copy = await ok(s, "remember_note", body=note.upper(), kind="devenv")
        assert copy.structured_content == {"id": "n_1", "space": "acme", "duplicate": True, "kind": "devenv"}
        similar = await ok(s, "remember_note", body=note.replace("ten minutes", "ten minutes or so"))
        assert similar.structured_content is not None and similar.structured_content["similar"] == ["n_1"]
    assert count(conn, "facts") == 3 and count(conn, "notes") == 2  # copies wrote nothing
    assert conn.execute("SELECT count(*) FROM tidy_actions WHERE action = 'supersede'").fetchone() == (1,)

    with Runtime(env=env, transport="cli", cwd=str(folder)) as rt:
        started = session_start(rt, rt.command_session(str(folder)), "claude-code", via="cli")
    lines = [line for line in started.text.splitlines() if line.startswith("- ")]
    assert [line.split("[")[1].split(" ")[0] for line in lines] == ["f_3"]
    assert "Left out: 2 facts replaced by a newer one (`lore tidy` lists them)." in started.text


def test_the_api_answers_a_copy_with_the_existing_fact(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    secret = token(conn, "alice")
    push(conn, "alice", f'[[space]]\nid = "work"\npaths = ["{project}/work"]\n')
    with httpx2.Client(base_url=signed_in.url, headers=bearer(secret, project / "work"), timeout=10) as api:
        made = api.post("/api/facts", json={"statement": "Deploys go to fly.io", "subject": "api"})
        assert made.status_code == 201 and made.json()["fact"]["id"] == "f_1"
        same = api.post("/api/facts", json={"statement": "deploys go to fly.io!", "subject": "api"})
        assert same.status_code == 200 and same.json()["duplicate"] is True and same.json()["id"] == "f_1"
        clash = api.post(
            "/api/facts", json={"statement": "Deploys go to Render, not fly.io anymore", "subject": "api"}
        )
        body = clash.json()
        # A change statement that says what went away names the fact it may replace (issue 40).
        assert clash.status_code == 201 and body["replaces"] == ["f_1"] and "May replace" in body["message"]
        assert 'supersedes="f_1"' in body["message"]
    assert count(conn, "facts") == 2


def test_two_sessions_writing_the_same_words_at_once_store_them_once(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    folder, env = work
    from lore.service import memory

    with Runtime(env=env, transport="cli", cwd=str(folder)) as rt:
        who = rt.command_session(str(folder))
        ready = threading.Barrier(4)
        answers: list[str] = []

        def write() -> None:
            ready.wait()
            done = memory.remember_fact(rt, who, "CI runs on Buildkite.", subject="acme")
            answers.append(f"{done.id}{'=' if done.duplicate else '+'}")

        threads = [threading.Thread(target=write) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(answers) == ["f_1+", "f_1=", "f_1=", "f_1="]
    assert count(conn, "facts") == 1


async def test_search_shows_a_near_duplicate_once_and_old_handoffs_last(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    folder, env = work
    env = {**env, "LORE_EMBEDDER": "none"}
    from lore.service import memory

    with Runtime(env=env, transport="cli", cwd=str(folder)) as rt:
        who = rt.command_session(str(folder))
        memory.CHECK_WRITES = False  # store the copy as an older lore would have
        try:
            for body in (
                "Releases: tag the commit, write the changelog, announce the release in the channel.",
                "Releases: write the changelog, tag the commit and announce the release in the channel.",
                "Release notes live in docs/releases; one file per release.",
            ):
                memory.remember_note(rt, who, body, kind="plan")
        finally:
            memory.CHECK_WRITES = True
        for n in range(5):  # five sessions' handoffs, each naming the release
            h = capture.Handoff(
                "acme", "codex", f"s{n}", str(folder), str(folder), "acme", "Stop",
                f"Prepared the release {n}: changelog and tag.", 40, None, None,
            )  # fmt: skip
            rt.transact(partial(handoffs.record, handoff=h))
        hits = await search.search_notes(
            rt, who.readable, "release changelog tag", session_space="acme", limit=5
        )
        loose = await search.search_notes(
            rt, who.readable, "release changelog tag", session_space="acme", limit=5, collapse=False
        )
    ids = [h.id for h in hits]
    assert ids[0] in ("n_1", "n_2") and hits[0].similar == ("n_2" if ids[0] == "n_1" else "n_1",)
    assert {"n_1", "n_2"} <= {h.id for h in loose}  # without folding both come back
    older = {f"n_{r[0]}" for r in conn.execute("SELECT note FROM handoffs ORDER BY updated_at LIMIT 2")}
    kinds = [h.kind for h in hits]
    assert "handoff" in kinds and all(i not in older for i in ids[: kinds.index("handoff")])
