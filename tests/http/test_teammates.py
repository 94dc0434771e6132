"""Teammates hand each other work: `accepts_from` / `reads_from` may name another user's space, and the
link holds only while both configs name each other. Then tasks and messages cross (from alice/... into
bob's inbox), and nothing else of either user shows; revoking either side stops it at the next request;
and Carol, whom nobody named, gets exactly what a space that does not exist gets."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from mcp import ClientSession
from support.lorehttp import Server, bearer, mcp_session, push, token
from support.machines import machine
from support.mcpclient import call, ok, text

pytestmark = pytest.mark.anyio


def config(base: Path, *, accepts: str = "", reads: str = "") -> str:
    """Spaces `work` (base/work) and `home` (the default), `work` naming teammates' spaces."""
    named = (f"accepts_from = [{accepts}]\n" if accepts else "") + (
        f"reads_from = [{reads}]\n" if reads else ""
    )
    work = f'[[space]]\nid = "work"\npaths = ["{base}/work"]\n{named}'
    return f'default_space = "home"\n{work}[[space]]\nid = "home"\n'


async def _error(session: ClientSession, tool: str, **args: object) -> str:
    result = await call(session, tool, **args)
    assert result.is_error, text(result)
    return text(result)


async def test_linked_teammates_file_and_message_each_other_and_see_nothing_else(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    push(conn, "alice", config(project, accepts='"bob/work"'))
    push(conn, "bob", config(project, accepts='"alice/work"'))
    alice, bob = token(conn, "alice"), token(conn, "bob")
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as b:
        await ok(b, "remember_fact", statement="BOB-SECRET: the staging password rotates monthly")
        await ok(b, "remember_note", body="BOB-NOTE: the staging password rotation runbook")
        assert "rotation» «runbook" in text(
            await ok(b, "search_notes", query="staging password rotation runbook")
        )
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as a:
        sent = await ok(a, "send_message", to="bob/work", body="Can you review the migration?")
        assert sent.structured_content == {"id": "m_1", "to": "bob/work"}
        filed = await ok(a, "file_task", title="Review the migration", body="PR 42", to="bob/work")
        assert filed.structured_content is not None and filed.structured_content["space"] == "bob/work"
        assert "BOB-SECRET" not in text(await ok(a, "recall_facts"))  # accepting is not reading
        assert "runbook»" not in text(await ok(a, "search_notes", query="staging password rotation runbook"))
        home = await _error(a, "send_message", to="bob/home", body="x")  # not linked: does not exist
        assert home == (await _error(a, "send_message", to="bob/nowhere", body="x")).replace(
            "nowhere", "home"
        )
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as b:
        inbox = text(await ok(b, "read_messages"))
        assert "from alice/work" in inbox and "Can you review the migration?" in inbox
        assert "Review the migration" in inbox and "[inbox] from alice/work" in inbox
        reply = await ok(b, "send_message", to="alice/work", body="Looks good", reply_to="m_1")
        assert reply.structured_content == {"id": "m_2", "to": "alice/work"}
        task = filed.structured_content["id"]
        await ok(b, "update_task", id=task, status="done")
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as a:
        assert "Looks good" in text(await ok(a, "read_messages"))
        moved = await _error(a, "update_task", id=task, status="todo")  # bob's task: not hers to move
        assert "BOB" not in moved
    rows = conn.execute("SELECT from_space, to_space FROM messages ORDER BY id").fetchall()
    assert rows == [("alice/work", "bob/work"), ("bob/work", "alice/work")]


async def test_one_sided_links_and_carol_learn_nothing(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    push(conn, "bob", config(project, accepts='"alice/work"', reads='"alice/work"'))
    push(conn, "alice", config(project))  # alice names nobody: bob's entries alone link nothing
    push(conn, "carol", config(project, accepts='"bob/work"', reads='"bob/work"'))  # bob never named her
    alice, bob, carol = token(conn, "alice"), token(conn, "bob"), token(conn, "carol")
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as a:
        await ok(a, "remember_fact", statement="ALICE-ONLY fact of work")
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as b:
        await ok(b, "remember_fact", statement="BOB-ONLY fact of work")
        await ok(b, "remember_note", body="BOB-NOTE: the staging cluster runbook")
        assert "ALICE-ONLY" not in text(await ok(b, "recall_facts"))
        refused = await _error(b, "send_message", to="alice/work", body="hi")
        assert refused == (await _error(b, "send_message", to="alice/nope", body="hi")).replace(
            "nope", "work"
        )
    async with mcp_session(signed_in.url, bearer(carol, project / "work")) as c:
        assert "BOB-ONLY" not in text(await ok(c, "recall_facts"))
        assert "runbook»" not in text(await ok(c, "search_notes", query="staging cluster runbook"))
        for tool, args in (("send_message", {"body": "hi"}), ("file_task", {"title": "t", "body": "b"})):
            real = await _error(c, tool, to="bob/work", **args)
            ghost = await _error(c, tool, to="nobody/work", **args)
            assert real == ghost.replace("nobody", "bob") and "No space 'bob/work'" in real
    assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM tasks").fetchone() == (0,)


async def test_reading_each_other_and_revoking_either_side_stops_it_at_once(
    signed_in: Server, conn: psycopg.Connection, project: Path, tmp_path: Path
) -> None:
    both = '"bob/work"'
    push(conn, "alice", config(project, accepts=both, reads=both))
    push(conn, "bob", config(project, accepts='"alice/work"', reads='"alice/work"'))
    alice, bob = token(conn, "alice"), token(conn, "bob")
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as b:
        await ok(b, "remember_fact", statement="BOB-WORK: the API freeze starts Monday")
    async with mcp_session(signed_in.url, bearer(bob, project / "home")) as b:
        await ok(b, "remember_fact", statement="BOB-HOME: dentist on Tuesday")
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as a:
        seen = text(await ok(a, "recall_facts"))
        assert "BOB-WORK" in seen and "BOB-HOME" not in seen  # the linked space only
        await ok(a, "send_message", to="bob/work", body="first")

    # Bob revokes through his own machine: `lore config push` with the entries gone.
    desk = machine(tmp_path, "bob-desk")
    desk.login(signed_in.url, bob)
    pushed = tmp_path / "bob.toml"
    pushed.write_text(config(project))
    assert "Pushed" in desk.ok("config", "push", str(pushed))
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as a:
        assert "BOB-WORK" not in text(await ok(a, "recall_facts"))
        gone = await _error(a, "send_message", to="bob/work", body="second")
        assert "No space 'bob/work'" in gone
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as b:
        assert "No space 'alice/work'" in await _error(
            b, "send_message", to="alice/work", body="x", reply_to="m_1"
        )

    # Linked again, then alice revokes: bob's side stops too.
    pushed.write_text(config(project, accepts='"alice/work"'))
    out = desk.ok("config", "push", str(pushed))
    assert "names alice/work: linked" in out
    push(conn, "alice", config(project))  # straight into the database: the server sees it within 2 s
    laptop = machine(tmp_path, "alice-laptop")
    laptop.login(signed_in.url, alice)
    laptop.ok("config", "push", str(_write(tmp_path / "alice.toml", config(project))))
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as b:
        assert "No space 'alice/work'" in await _error(b, "send_message", to="alice/work", body="y")
    rows = conn.execute("SELECT body FROM messages ORDER BY id").fetchall()
    assert rows == [("first",)]


def _write(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


async def test_push_says_which_teammates_links_hold(
    signed_in: Server, conn: psycopg.Connection, project: Path, tmp_path: Path
) -> None:
    laptop, desk = machine(tmp_path, "alice"), machine(tmp_path, "bob")
    laptop.login(signed_in.url, token(conn, "alice"))
    desk.login(signed_in.url, token(conn, "bob"))
    mine = _write(tmp_path / "alice.toml", config(project, accepts='"bob/work"'))
    first = laptop.ok("config", "push", str(mine))
    assert "alice/work.accepts_from names bob/work: not linked yet" in first
    desk.ok("config", "push", str(_write(tmp_path / "bob.toml", config(project, accepts='"alice/work"'))))
    assert "alice/work.accepts_from names bob/work: linked" in laptop.ok("config", "push", str(mine))
    sent = laptop.ok("messages", "send", "bob/work", "handing over the release", cwd=project / "work")
    assert sent.startswith("Sent m_") and "to bob/work" in sent
    assert "from alice/work" in desk.ok("messages", "read", cwd=project / "work")
    assert laptop.untouched() and desk.untouched()
