"""file_task, update_task, send_message, read_messages through real MCP sessions (`lore mcp`)."""

from __future__ import annotations

import time
from contextlib import AsyncExitStack
from typing import Any

import anyio
import psycopg
import pytest
from support.mcpclient import call, lore_session, ok, text

from .conftest import Spaces

pytestmark = pytest.mark.anyio


async def test_two_sessions_in_two_spaces_exchange_a_question_and_an_answer(spaces: Spaces) -> None:
    """alpha asks gamma (gamma accepts alpha) and waits; gamma answers. alpha does not accept gamma:
    asking is what lets gamma answer. The answer reaches the waiting call through LISTEN/NOTIFY."""
    asked: dict[str, Any] = {}
    async with (
        lore_session(spaces.env, cwd=spaces.dirs["alpha"], client="agent-alpha") as a,
        lore_session(spaces.env, cwd=spaces.dirs["gamma"], client="agent-gamma") as g,
    ):

        async def ask() -> None:
            asked["result"] = await ok(a, "send_message", to="gamma", body="Which port?", wait_seconds=30)
            asked["at"] = time.monotonic()

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            for _ in range(200):  # the test looks until the question is there; the server never polls
                seen = await ok(g, "read_messages")
                if seen.structured_content and seen.structured_content["messages"]:
                    break
                await anyio.sleep(0.05)
            assert seen.structured_content is not None
            question = seen.structured_content["messages"][0]
            assert question["from"] == "alpha" and question["source"] == "agent-alpha"
            assert "Which port?" in text(seen) and "m_1 from alpha (agent-alpha)" in text(seen)
            await ok(g, "send_message", to="alpha", body="8765, see README", reply_to=question["id"])
            answered = time.monotonic()
        result = asked["result"]
        assert "Reply:" in text(result) and "8765, see README" in text(result)
        assert result.structured_content["reply"]["from"] == "gamma"
        assert result.structured_content["reply"]["reply_to"] == question["id"]
        assert asked["at"] - answered < 1.0  # delivered on commit, not found by a later poll
        # the waiting sender got it: it is read, nothing is left for alpha's read_messages
        after = await ok(a, "read_messages")
        assert "No unread messages." in text(after)


async def test_a_waiting_send_message_runs_no_query_while_it_waits(
    spaces: Spaces, conn: psycopg.Connection
) -> None:
    """While send_message waits for a reply that does not come, the server runs no query on
    `messages` (not on its LISTEN connection, not on a pooled one): the wait is on the socket, and a
    poller of any period under the window (2 s) would show up in pg_stat_activity."""
    async with lore_session(spaces.env, cwd=spaces.dirs["alpha"], client="agent-alpha") as a:
        window: dict[str, Any] = {}

        async def watch() -> None:
            await anyio.sleep(1.0)  # past the send and the first check of the table
            start = conn.execute("SELECT clock_timestamp()").fetchone()
            conn.commit()
            await anyio.sleep(2.0)
            assert start is not None
            window["queries"] = conn.execute(
                """SELECT pid, state, query FROM pg_stat_activity
                   WHERE pid <> pg_backend_pid() AND datname = current_database()
                     AND query ILIKE '%%messages%%' AND query_start > %s""",
                (start[0],),
            ).fetchall()
            conn.commit()

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            started = time.monotonic()
            waited = await ok(a, "send_message", to="gamma", body="anyone?", wait_seconds=4)
        assert 4 <= time.monotonic() - started < 30
        assert "no reply" in text(waited).lower(), text(waited)
        assert window["queries"] == [], window["queries"]


async def test_without_accepts_from_nothing_is_written(spaces: Spaces, conn: psycopg.Connection) -> None:
    async with lore_session(spaces.env, cwd=spaces.dirs["alpha"]) as a:
        for tool, args in (
            ("send_message", {"to": "beta", "body": "hi"}),
            ("file_task", {"title": "Fix it", "body": "please", "to": "beta"}),
        ):
            refused = await call(a, tool, **args)
            assert refused.is_error
            message = text(refused)
            assert "does not accept tasks or messages from 'alpha'" in message
            assert "accepts_from" in message and spaces.env["LORE_CONFIG"] in message
        unknown = await call(a, "send_message", to="nowhere", body="hi")
        assert unknown.is_error and "alpha, beta, gamma" in text(unknown)
        spaced = await call(a, "file_task", title="x", body="y", space="beta")
        assert spaced.is_error and "tools take no `space`" in text(spaced)
        too_long = await call(a, "send_message", to="gamma", body="x" * 4001)
        assert too_long.is_error and "limit is 4,000" in text(too_long)
        too_patient = await call(a, "send_message", to="gamma", body="x", wait_seconds=61)
        assert too_patient.is_error and "0 to 60" in text(too_patient)
    counts = conn.execute("SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM notes)").fetchone()
    assert counts == (0, 0)


async def test_an_answer_is_not_a_licence_to_keep_writing(spaces: Spaces, conn: psycopg.Connection) -> None:
    """beta asks alpha (alpha accepts beta); alpha answers. beta accepts nobody: alpha replying to its
    own answer (continuing the thread into beta) is refused, and nothing more lands in beta's inbox."""
    async with (
        lore_session(spaces.env, cwd=spaces.dirs["beta"]) as b,
        lore_session(spaces.env, cwd=spaces.dirs["alpha"]) as a,
    ):
        asked = (await ok(b, "send_message", to="alpha", body="Which port?")).structured_content
        answered = (
            await ok(a, "send_message", to="beta", body="8765", reply_to=asked["id"])
        ).structured_content
        assert answered == {"id": "m_2", "to": "beta"}
        more = await call(a, "send_message", to="beta", body="and another thing", reply_to=answered["id"])
        assert more.is_error, text(more)
        assert "does not accept tasks or messages from 'alpha'" in text(more)
        task = await call(a, "file_task", title="Also", body="this", to="beta")
        assert task.is_error and "does not accept tasks or messages from 'alpha'" in text(task)
    rows = conn.execute("SELECT from_space, to_space, body FROM messages ORDER BY id").fetchall()
    assert rows == [("beta", "alpha", "Which port?"), ("alpha", "beta", "8765")]
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


async def test_tasks_filed_across_spaces_are_triaged_by_the_owner(spaces: Spaces) -> None:
    async with (
        lore_session(spaces.env, cwd=spaces.dirs["beta"], client="codex") as b,
        lore_session(spaces.env, cwd=spaces.dirs["alpha"], client="claude-code") as a,
    ):
        filed = (
            await ok(b, "file_task", title="Fix CI", body="red since Monday", to="alpha")
        ).structured_content
        assert filed is not None and filed["space"] == "alpha" and filed["status"] == "inbox"
        own = (await ok(b, "file_task", title="Own work", body="in beta")).structured_content
        assert own is not None and own["status"] == "todo" and own["space"] == "beta"

        listed = text(await ok(a, "read_messages"))
        assert f"- {filed['id']} [inbox] from beta: Fix CI — red since Monday" in listed
        assert "Own work" not in listed
        moved = await ok(a, "update_task", id=filed["id"], status="doing", note="taking it")
        assert text(moved) == f"{filed['id']}: inbox → doing."
        # the sender cannot touch it (not its space); bad statuses say which exist
        other = await call(b, "update_task", id=filed["id"], status="done")
        assert other.is_error and "No task" in text(other)
        bad = await call(a, "update_task", id=filed["id"], status="finished")
        assert bad.is_error and "inbox, todo, doing, blocked, done" in text(bad)


async def test_a_session_does_not_read_its_own_message_to_its_own_space(spaces: Spaces) -> None:
    async with (
        lore_session(spaces.env, cwd=spaces.dirs["alpha"]) as one,
        lore_session(spaces.env, cwd=spaces.dirs["alpha"]) as two,
    ):
        await ok(one, "send_message", to="alpha", body="for the other alpha session")
        assert "No unread messages." in text(await ok(one, "read_messages"))
        assert "for the other alpha session" in text(await ok(two, "read_messages"))


async def test_eight_concurrent_sessions_read_each_message_exactly_once(
    spaces: Spaces, conn: psycopg.Connection
) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO messages (to_space, from_space, body, source) VALUES ('alpha', 'beta', %s, 'seed')",
            [(f"message {i}",) for i in range(40)],
        )
    conn.commit()
    got: list[str] = []
    async with AsyncExitStack() as stack:
        sessions = [
            await stack.enter_async_context(
                lore_session(spaces.env, cwd=spaces.dirs["alpha"], client=f"r{i}")
            )
            for i in range(8)
        ]

        async def drain(session: Any) -> None:
            while True:
                result = await ok(session, "read_messages")
                batch = result.structured_content["messages"]
                if not batch:
                    return
                got.extend(m["id"] for m in batch)

        async with anyio.create_task_group() as tg:
            for session in sessions:
                tg.start_soon(drain, session)
    assert len(got) == 40 and len(set(got)) == 40
    assert conn.execute("SELECT count(*) FROM messages WHERE read_at IS NULL").fetchone() == (0,)
