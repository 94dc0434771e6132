"""The /api routes the command line on a client uses (notes, search, handoff, tidy, tasks, messages,
export, which) hold the same rules as the rest of /api: the one 401 without a token, the body cap, JSON
only, the per-user rate, and another user's ids or spaces answering exactly as ones that do not exist."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, bearer, push, start_server, token, two_space_config

READS = ["/api/which", "/api/search?q=x", "/api/handoff", "/api/tidy", "/api/tasks", "/api/tasks/n_1",
         "/api/messages", "/api/export"]  # fmt: skip
WRITES = ["/api/notes", "/api/tasks", "/api/tasks/n_1", "/api/messages", "/api/messages/read",
          "/api/tidy/keep"]  # fmt: skip


def test_no_token_no_json_too_large(signed_in: Server, conn: psycopg.Connection, project: Path) -> None:
    secret = token(conn, "alice")
    with httpx2.Client(base_url=signed_in.url, timeout=30) as web:
        baseline = web.get("/api/facts")
        assert baseline.status_code == 401
        for path in READS:
            refused = web.get(path, headers={"X-Lore-Workspace": str(project / "work")})
            assert (refused.status_code, refused.text) == (401, baseline.text), path
        mine = bearer(secret, project / "work")
        for path in WRITES:
            assert web.post(path, json={}).status_code == 401, path
            plain = web.post(path, content=b"{}", headers={**mine, "Content-Type": "text/plain"})
            assert plain.status_code == 415, (path, plain.text)
            big = web.post(path, content=b'{"body": "' + b"x" * (600 * 1024) + b'"}',
                           headers={**mine, "Content-Type": "application/json"})  # fmt: skip
            assert big.status_code == 413 and "over 512 KiB" in big.json()["error"], path
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


def test_another_users_items_answer_as_missing_ones(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    for user in ("alice", "bob"):
        push(conn, user, two_space_config(project))
    alice = bearer(token(conn, "alice"), project / "work")
    bob = bearer(token(conn, "bob"), project / "work")
    with httpx2.Client(base_url=signed_in.url, timeout=30) as web:
        note = web.post("/api/notes", json={"body": "ALICE-RUNBOOK: rotate the signing keys"}, headers=alice)
        assert note.status_code == 201, note.text
        task = web.post("/api/tasks", json={"title": "ALICE-TASK", "body": "b"}, headers=alice).json()["task"]
        fact = web.post("/api/facts", json={"statement": "ALICE-FACT: deploys on Fridays"}, headers=alice)
        fid, tid = fact.json()["fact"]["id"], task["id"]
        missing_task, missing_fact = "n_99999", "f_99999"

        def same(path_real: str, path_ghost: str, method: str = "GET", body: object = None) -> None:
            real = web.request(method, path_real, headers=bob, json=body)
            ghost = web.request(method, path_ghost, headers=bob, json=body)
            assert real.status_code == ghost.status_code == 404, (path_real, real.text)
            words = (tid, missing_task) if tid in path_real else (fid, missing_fact)
            assert real.text == ghost.text.replace(words[1], words[0]).replace(words[1][2:], words[0][2:])

        same(f"/api/tasks/{tid}", f"/api/tasks/{missing_task}")
        same(f"/api/tasks/{tid}", f"/api/tasks/{missing_task}", "POST", {"status": "done"})
        same(f"/api/facts/{fid}", f"/api/facts/{missing_fact}")
        alice_note = note.json()["note"]["id"]
        for act, body in (("forget", {"ids": [fid]}), ("keep", {"ids": [alice_note, tid]})):
            refused = web.post(f"/api/tidy/{act}", json=body, headers=bob)
            assert refused.status_code == 404 and "ALICE" not in refused.text, refused.text
        found = web.get("/api/search", params={"q": "rotate the signing keys"}, headers=bob).json()
        assert found["results"] == [] and "ALICE" not in json.dumps(found)
        assert "ALICE" not in web.get("/api/tasks", params={"all": "1"}, headers=bob).text
        assert "ALICE" not in web.get("/api/tidy", headers=bob).text
        sent = web.post("/api/messages", json={"to": "alice/work", "body": "hi"}, headers=bob)
        ghost = web.post("/api/messages", json={"to": "nobody/work", "body": "hi"}, headers=bob)
        assert sent.status_code == ghost.status_code == 404
        assert sent.text == ghost.text.replace("nobody/work", "alice/work")
        exported = web.get("/api/export", headers=bob).text
        assert "ALICE" not in exported and '"spaces":["bob/work","bob/home"]' in exported
        for space in ("alice/work", "nobody/work"):
            refused = web.get("/api/export", params={"space": space}, headers=bob)
            assert refused.status_code == 404 and refused.json()["error"] == "No such space among yours."
        own = web.get("/api/export", params={"space": "work"}, headers=alice).text
        assert "ALICE-FACT" in own and '"space":"alice/work"' in own

        # A hook outcome no space could be chosen for is its user's record, and nobody else's.
        push(conn, "carol", '[[space]]\nid = "work"\npaths = ["/nowhere"]\n')
        carol = bearer(token(conn, "carol"), project / "work")
        hooked = web.post(
            "/api/hooks/session-start",
            json={"workspace": str(project / "work"), "client": "claude-code"},
            headers=carol,
        )
        assert hooked.json().get("outcome") == "config", hooked.text
        mine = web.get("/api/log", headers=carol).json()["records"]
        assert [(r["space"], r["outcome"]) for r in mine] == [(None, "config")]
        record = mine[0]["id"]
        assert web.get(f"/api/log/{record}", headers=carol).status_code == 200
        assert all(r["id"] != record for r in web.get("/api/log", headers=bob).json()["records"])
        assert web.get(f"/api/log/{record}", headers=bob).status_code == 404


@pytest.fixture
def limited(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    env = {**lore_env, "LORE_USER_RATE": "0.5", "LORE_USER_BURST": "3"}
    with start_server(env, tmp_path / "serve.log", "--sign-in") as server:
        yield server


def test_the_new_routes_count_against_the_users_rate(
    limited: Server, conn: psycopg.Connection, project: Path
) -> None:
    alice = bearer(token(conn, "alice"), project / "work")
    with httpx2.Client(base_url=limited.url, timeout=30) as web:
        answers = [web.get("/api/tasks", headers=alice).status_code for _ in range(5)]
        assert answers[:3] == [200, 200, 200] and 429 in answers[3:], answers
