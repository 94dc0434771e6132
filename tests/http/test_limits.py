"""What docs/deploy.md promises an operator, on a real `lore serve` against a database of its own:
LORE_MAX_SESSIONS answers 503 beyond the limit, /readyz answers 503 while the schema is older than
the process expects, and the pool never holds more than LORE_POOL_SIZE connections."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import psycopg
import pytest
from support.jsonrpc import MCP_HEADERS, initialize
from support.lorehttp import Server, mcp_session, start_server
from support.mcpclient import ok

from lore.db import migrate

DB = "lore_limits"
INITIALIZE = initialize("raw")


@dataclass(frozen=True)
class Private:
    url: str
    env: dict[str, str]
    work: Path
    tmp: Path

    def serve(self, **env: str) -> Server:
        return start_server({**self.env, **env}, self.tmp / "serve.log")


@pytest.fixture
def private(db_url: str, lore_env: dict[str, str], tmp_path: Path) -> Iterator[Private]:
    """A database of its own on the test server (so that pg_stat_activity and schema_migrations
    concern only this test's server), and a config with one space."""
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB}")
    url = db_url.replace("/lore?", f"/{DB}?")
    assert f"/{DB}?" in url
    work = tmp_path / "work"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "solo"\npaths = ["{work}"]\n')
    yield Private(url, {**lore_env, "LORE_DATABASE_URL": url, "LORE_EMBEDDER": "fake"}, work, tmp_path)
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")


def _open_session(server: Server) -> httpx2.Response:
    return httpx2.post(
        f"{server.url}/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **server.local()}, timeout=10
    )


pytestmark = pytest.mark.anyio


async def test_sessions_beyond_lore_max_sessions_get_503(private: Private) -> None:
    server = private.serve(LORE_MAX_SESSIONS="2")
    try:
        headers = server.local(private.work)
        async with AsyncExitStack() as stack:
            for _ in range(2):
                session = await stack.enter_async_context(mcp_session(server.url, headers))
                await ok(session, "remember_fact", statement="a session that counts")
            refused = await anyio.to_thread.run_sync(_open_session, server)
            assert refused.status_code == 503, refused.text
            assert "Too many open sessions" in refused.text
            assert "mcp-session-id" not in refused.headers
        # both closed (the client ends its session on the way out): room again
        for _ in range(50):
            again = await anyio.to_thread.run_sync(_open_session, server)
            if again.status_code != 503:
                break
            await anyio.sleep(0.1)
        assert again.status_code == 200 and again.headers.get("mcp-session-id"), again.text
    finally:
        server.stop()


def test_readyz_answers_503_while_the_schema_is_older_than_expected(private: Private) -> None:
    server = private.serve()
    latest = max(m.version for m in migrate.available())
    try:
        ready = httpx2.get(f"{server.url}/readyz", timeout=10)
        expected = {"ok": True, "schema": latest, "expected": latest, "listen": "LISTEN on the database URL"}
        assert (ready.status_code, ready.json()) == (200, expected)
        with psycopg.connect(private.url, autocommit=True) as conn:
            name = conn.execute("SELECT name FROM schema_migrations WHERE version = %s", (latest,)).fetchone()
            assert name is not None
            # the database as a previous version of lore left it (this process expects `latest`)
            conn.execute("DELETE FROM schema_migrations WHERE version = %s", (latest,))
            older = httpx2.get(f"{server.url}/readyz", timeout=10)
            assert older.status_code == 503
            previous = sorted(m.version for m in migrate.available())[-2]  # numbers may skip one
            assert older.json() == {**expected, "ok": False, "schema": previous}
            assert httpx2.get(f"{server.url}/healthz", timeout=10).status_code == 200  # alive, not ready
            conn.execute("INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (latest, name[0]))
            newer = conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, 'future')", (latest + 1,)
            )
            assert newer.rowcount == 1
        # a newer schema (a newer replica migrated it) is ready
        ahead = httpx2.get(f"{server.url}/readyz", timeout=10)
        assert (ahead.status_code, ahead.json()) == (
            200,
            {**expected, "schema": latest + 1},
        )
    finally:
        server.stop()


async def test_the_pool_stays_within_lore_pool_size(private: Private) -> None:
    """Eight sessions calling at once through one server with LORE_POOL_SIZE=2: a sampler reading
    pg_stat_activity every few milliseconds never sees more than 2 `lore` connections, and sees 2."""
    server = private.serve(LORE_POOL_SIZE="2")
    seen: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        with psycopg.connect(private.url, autocommit=True) as conn:
            while not stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'lore'",
                    (DB,),
                ).fetchone()
                seen.append(int(row[0]) if row else -1)
                time.sleep(0.005)

    sampler = threading.Thread(target=sample, daemon=True)
    try:
        headers = server.local(private.work)
        async with AsyncExitStack() as stack:
            sessions = [await stack.enter_async_context(mcp_session(server.url, headers)) for _ in range(8)]
            sampler.start()

            async def work(n: int) -> None:
                for i in range(12):
                    await ok(sessions[n], "remember_fact", statement=f"fact {n}-{i}")
                    await ok(sessions[n], "recall_facts")

            async with anyio.create_task_group() as tg:
                for n in range(8):
                    tg.start_soon(work, n)
        stop.set()
        sampler.join(10)
    finally:
        stop.set()
        server.stop()
    with psycopg.connect(private.url) as conn:
        assert conn.execute("SELECT count(*) FROM facts").fetchone() == (96,)
    assert len(seen) > 20, seen
    assert max(seen) == 2, sorted(set(seen))
