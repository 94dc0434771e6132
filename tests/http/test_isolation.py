"""Many users on one server: each sees and writes only their own spaces, even with the same space
ids, the same paths, and another user's item ids in hand. Through MCP and through the JSON API."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, bearer, mcp_session, push, token, two_space_config
from support.mcpclient import call, ok, text

pytestmark = pytest.mark.anyio


async def test_same_ids_same_paths_different_memories(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    users = {name: token(conn, name) for name in ("alice", "bob")}
    for name in users:
        push(conn, name, two_space_config(project))  # identical configs: ids `work`, `home`
    ids: dict[str, dict[str, str]] = {}
    for name, secret in users.items():
        async with mcp_session(signed_in.url, bearer(secret, project / "work")) as s:
            fact = await ok(s, "remember_fact", statement=f"{name} deploys with make ship-{name}")
            note = await ok(
                s, "remember_note", body=f"{name} runbook: rotate keys quarterly", title="runbook"
            )
            assert fact.structured_content["space"] == f"{name}/work"
            ids[name] = {"fact": fact.structured_content["id"], "note": note.structured_content["id"]}

    alice_work = bearer(users["alice"], project / "work")
    async with mcp_session(signed_in.url, alice_work) as s:
        recalled = text(await ok(s, "recall_facts"))
        assert "make ship-alice" in recalled and "bob" not in recalled
        found = text(await ok(s, "search_notes", query="runbook rotate keys"))
        assert ids["alice"]["note"] in found and "alice" in found and "bob" not in found
        bob_fact, bob_note = ids["bob"]["fact"], ids["bob"]["note"]
        for tool, args in (
            ("revise_fact", {"id": bob_fact, "statement": "hijacked"}),
            ("forget", {"id": bob_fact, "reason": "hijack"}),
            ("forget", {"id": bob_note, "reason": "hijack"}),
        ):
            result = await call(s, tool, **args)
            assert result.is_error and "in this session's spaces" in text(result), text(result)
            assert "make ship-bob" not in text(result)
        refused = await call(s, "remember_fact", statement="into bob", space="bob/work")
        assert refused.is_error and "space" in text(refused)

    rows = conn.execute(
        "SELECT space, statement FROM facts WHERE superseded_at IS NULL ORDER BY space"
    ).fetchall()
    assert rows == [
        ("alice/work", "alice deploys with make ship-alice"),
        ("bob/work", "bob deploys with make ship-bob"),
    ]
    assert conn.execute("SELECT count(*) FROM forget_log").fetchone() == (0,)

    with httpx2.Client(base_url=signed_in.url, headers=alice_work, timeout=10) as api:
        listed = api.get("/api/facts").json()
        assert [f["statement"] for f in listed["facts"]] == ["alice deploys with make ship-alice"]
        assert api.get(f"/api/facts/{ids['bob']['fact']}").status_code == 404
        forget = api.post(f"/api/facts/{ids['bob']['fact']}/forget", json={"reason": "hijack"})
        assert forget.status_code == 404 and "ship-bob" not in forget.text
        start = api.get("/api/session-start").json()
        assert "ship-alice" in start["text"] and "ship-bob" not in start["text"]
        spaces = api.get("/api/spaces").json()
        assert [s["name"] for s in spaces["spaces"]] == ["work", "home"]
        assert {s["id"] for s in spaces["spaces"]} == {"alice/work", "alice/home"}
        written = api.post("/api/facts", json={"statement": "via api", "workspace": str(project / "home")})
        assert written.status_code == 201 and written.json()["fact"]["space"] == "alice/home"
    with httpx2.Client(
        base_url=signed_in.url, headers=bearer(users["bob"], project / "home"), timeout=10
    ) as api:
        assert api.get("/api/facts").json()["facts"] == []


async def test_tasks_and_messages_never_cross_users(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    alice, bob = token(conn, "alice"), token(conn, "bob")
    for name in ("alice", "bob"):
        push(conn, name, two_space_config(project))
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as s:
        for tool, args in (
            ("send_message", {"to": "bob/home", "body": "psst"}),
            ("send_message", {"to": "bob/work", "body": "psst"}),
            ("file_task", {"title": "t", "body": "do it", "to": "bob/home"}),
        ):
            result = await call(s, tool, **args)
            assert result.is_error and "No space" in text(result), (tool, text(result))
        sent = await ok(s, "send_message", to="alice/home", body="own space: fine")
        assert sent.structured_content["to"] == "alice/home"
        bare = await ok(s, "send_message", to="home", body="a bare name is her own space")
        assert bare.structured_content["to"] == "alice/home"
    async with mcp_session(signed_in.url, bearer(bob, project / "home")) as s:
        inbox = text(await ok(s, "read_messages"))
        assert "psst" not in inbox and "own space" not in inbox
    assert conn.execute("SELECT to_space FROM messages").fetchall() == [("alice/home",), ("alice/home",)]
    assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (0,)


async def test_a_user_without_a_pushed_config_has_one_personal_space(
    signed_in: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    carol = token(conn, "carol")
    async with mcp_session(signed_in.url, bearer(carol, tmp_path)) as s:
        done = await ok(s, "remember_fact", statement="zero set-up")
        assert done.structured_content["space"] == "carol/personal"
