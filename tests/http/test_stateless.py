"""A stateless `lore serve` (`--stateless`) answered in one process: the session id it issues, GET
and DELETE /mcp refused with 405 (nothing is pushed, no session is ended: as the SDK's own stateless
transport), a session id it cannot have issued answered 404, and a request the database fails under
outside any tool answered 503 with Retry-After (never a bare 500)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from support.jsonrpc import MCP_HEADERS, initialize
from support.lorehttp import bearer, mcp_session, push, start_server, token, two_space_config
from support.mcpclient import ok

from lore.core import session_ids

pytestmark = pytest.mark.anyio
DB = "lore_stateless"


async def test_the_issued_session_id_get_and_delete(
    lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection, project: Path
) -> None:
    alice = token(conn, "alice")
    push(conn, "alice", two_space_config(project))
    headers = bearer(alice, project / "work")
    with start_server(lore_env, tmp_path / "serve.log", "--sign-in", "--stateless") as server:
        opened = httpx2.post(
            f"{server.url}/mcp", json=initialize("raw-client"), headers={**MCP_HEADERS, **headers}, timeout=10
        )
        assert opened.status_code == 200, opened.text
        sid = opened.headers["mcp-session-id"]
        assert session_ids.client_of(sid) == ("raw-client", "1")
        with_id = {**MCP_HEADERS, **headers, "mcp-session-id": sid}
        pushed = httpx2.get(
            f"{server.url}/mcp", headers={**with_id, "Accept": "text/event-stream"}, timeout=5
        )
        assert pushed.status_code == 405 and pushed.headers["allow"] == "POST"
        async with mcp_session(server.url, headers, client="sdk-client") as s:
            await ok(s, "remember_fact", statement="stateless")
        # the SDK's client asked to end its session on the way out and was told 405 (it says nothing
        # of it): the record of its space stays, to expire with the unseen ones
        assert conn.execute("SELECT count(*) FROM mcp_sessions").fetchone() == (1,)
        assert conn.execute("SELECT source FROM facts").fetchall() == [("sdk-client",)]
        for who in ({**MCP_HEADERS, "mcp-session-id": sid}, with_id):  # without a token, and with one
            ended = httpx2.delete(f"{server.url}/mcp", headers=who, timeout=5)
            assert ended.status_code == 405 and ended.headers["allow"] == "POST", ended.text
        # so no session it issued is ever one to answer 404: the same id goes on
        listed = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        again = httpx2.post(f"{server.url}/mcp", json=listed, headers=with_id, timeout=10)
        assert again.status_code == 200 and again.json()["result"]["tools"], again.text
        # an id lore cannot have issued is an unknown session: 404, start a new one
        for made_up in (
            "abc",
            "lore1.x.y",
            f"lore1.{sid.split('.')[1]}.nothex",
            sid + "0",
            "lore1..",
            "a" * 2000,
        ):
            unknown = httpx2.post(
                f"{server.url}/mcp", json=listed, headers={**with_id, "mcp-session-id": made_up}, timeout=10
            )
            assert unknown.status_code == 404, (made_up, unknown.status_code, unknown.text)
            assert "initialize a new session" in unknown.json()["error"]["message"]
        # ... once the token is checked: without one it is the same 401 as any other request
        stranger = httpx2.post(
            f"{server.url}/mcp", json=listed, headers={**MCP_HEADERS, "mcp-session-id": "abc"}, timeout=10
        )
        assert stranger.status_code == 401


def test_a_database_gone_under_a_token_check_is_a_503_to_retry(
    db_url: str, lore_env: dict[str, str], tmp_path: Path
) -> None:
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
    url = db_url.replace("/lore?", f"/{DB}?")
    try:
        env = {**lore_env, "LORE_DATABASE_URL": url, "LORE_POOL_TIMEOUT": "1"}
        with start_server(env, tmp_path / "serve.log", "--sign-in") as server:
            with psycopg.connect(url) as own:
                alice = token(own, "alice")
            assert httpx2.get(f"{server.url}/api/me", headers=bearer(alice), timeout=10).status_code == 200
            with psycopg.connect(db_url, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE {DB} WITH (FORCE)")
            gone = httpx2.get(f"{server.url}/api/me", headers=bearer(alice), timeout=30)
            assert gone.status_code == 503, gone.text
            assert gone.headers["retry-after"] == "1" and gone.headers["x-request-id"]
            assert "PostgreSQL" in gone.json()["error"] and gone.json()["hint"]
    finally:
        with psycopg.connect(db_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
