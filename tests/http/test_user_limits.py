"""One signed-in user cannot starve the others (`lore serve --sign-in`): per-user caps on open MCP
sessions, requests a second and calls waiting for a reply; past a cap that user alone gets 429 (or
a tool error saying why), while other users (and, below the rate, the same user's hosted hook at
`/api`) still work. The JSON API counts against the same per-user rate as `/mcp`.
And all waiting calls of a process share one LISTEN connection.

Before: the session cap was global (one user's 60 sessions got everyone 503), there was no rate
cap, and each waiting `send_message` held a PostgreSQL connection of its own (220 of them ran the
server out of connections: "too many clients already")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import httpx2
import psycopg
import pytest
from support.jsonrpc import MCP_HEADERS, initialize
from support.lorehttp import Server, bearer, mcp_session, push, start_server, token, two_space_config
from support.mcpclient import call, ok, text

pytestmark = pytest.mark.anyio
LIMITS = {
    "LORE_USER_MAX_SESSIONS": "3",
    "LORE_USER_RATE": "2",
    "LORE_USER_BURST": "40",
    "LORE_USER_MAX_WAITS": "4",
}
INITIALIZE = initialize("raw")


@pytest.fixture
def limited(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    with start_server({**lore_env, **LIMITS}, tmp_path / "serve.log", "--sign-in") as server:
        yield server


@pytest.fixture
def users(conn: psycopg.Connection, project: Path) -> dict[str, str]:
    found = {name: token(conn, name) for name in ("alice", "bob")}
    for name in found:
        push(conn, name, two_space_config(project))
    return found


def _initialize(server: Server, secret: str, project: Path) -> httpx2.Response:
    headers = {**MCP_HEADERS, **bearer(secret, project / "work")}
    return httpx2.post(f"{server.url}/mcp", json=INITIALIZE, headers=headers, timeout=10)


async def test_sessions_are_capped_per_user(limited: Server, users: dict[str, str], project: Path) -> None:
    async with AsyncExitStack() as stack:
        for _ in range(3):
            await stack.enter_async_context(
                mcp_session(limited.url, bearer(users["alice"], project / "work"))
            )
        refused = _initialize(limited, users["alice"], project)
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"] == "too_many_sessions" and "close one" in refused.text
        assert int(refused.headers["retry-after"]) >= 1
        # bob is not alice: his sessions open; alice's hosted hook (the JSON API) still answers
        async with mcp_session(limited.url, bearer(users["bob"], project / "work")) as bob:
            assert (await ok(bob, "remember_fact", statement="bob still works")).structured_content
        hook = httpx2.get(
            f"{limited.url}/api/session-start",
            params={"workspace": str(project / "work"), "client": "claude-code"},
            headers=bearer(users["alice"]),
            timeout=10,
        )
        assert hook.status_code == 200, hook.text
    # her sessions closed: she may open new ones
    async with mcp_session(limited.url, bearer(users["alice"], project / "work")) as again:
        await ok(again, "recall_facts")


def test_requests_are_rate_limited_per_user(limited: Server, users: dict[str, str], project: Path) -> None:
    answers = [_initialize(limited, users["alice"], project) for _ in range(60)]
    codes = [a.status_code for a in answers]
    assert 429 in codes and codes.count(200) >= 3, codes
    throttled = next(a for a in answers if a.status_code == 429)
    assert throttled.json()["error"] in ("rate_limited", "too_many_sessions")
    assert int(throttled.headers["retry-after"]) >= 1
    assert _initialize(limited, users["bob"], project).status_code == 200  # his own budget


def test_the_json_api_shares_the_users_rate(limited: Server, users: dict[str, str], project: Path) -> None:
    """Trust round 3, item 7: signed-in `/api` was outside the per-user limiter (40 threads of one
    user wrote 1,876 facts unthrottled, and another user's recall went from 5 to 182 ms)."""
    url = f"{limited.url}/api/facts"
    where = {"workspace": str(project / "work")}
    with httpx2.Client(headers=bearer(users["alice"]), timeout=10) as alice:
        codes = [
            alice.post(url, params=where, json={"statement": f"fact {i}"}).status_code for i in range(60)
        ]
    assert 429 in codes and codes.count(201) >= 10, codes
    bob = httpx2.get(url, params=where, headers=bearer(users["bob"]), timeout=10)
    assert bob.status_code == 200  # his own budget


async def test_waiting_calls_are_capped_per_user_and_share_one_listen_connection(
    limited: Server, users: dict[str, str], project: Path, conn: psycopg.Connection
) -> None:
    said: list[str] = []
    async with (
        mcp_session(limited.url, bearer(users["alice"], project / "work")) as alice,
        mcp_session(limited.url, bearer(users["bob"], project / "work")) as bob,
    ):

        async def wait_in(session: object, body: str) -> None:
            result = await call(session, "send_message", to="home", body=body, wait_seconds=6)  # type: ignore[arg-type]
            said.append(text(result))

        async with anyio.create_task_group() as group:
            for i in range(4):
                group.start_soon(wait_in, alice, f"alice asks {i}")
            group.start_soon(wait_in, bob, "bob asks")
            await anyio.sleep(2)  # all five are waiting now
            listening = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lore-listen'"
            ).fetchone()
            conn.commit()
            refused = await call(alice, "send_message", to="home", body="one too many", wait_seconds=6)
    assert listening == (1,), "every waiting call of the process shares one LISTEN connection"
    assert refused.is_error and "You already have 4 calls waiting" in text(refused), text(refused)
    assert sum("no reply within" in s for s in said) == 5, said  # the five waited out their time
    rows = conn.execute("SELECT count(*) FROM messages WHERE body = 'one too many'").fetchone()
    assert rows == (0,), "a refused waiting call sends nothing"
