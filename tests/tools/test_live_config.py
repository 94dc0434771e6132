"""A running server resolves every call against the config file as it is now (issue 12, live config).

`lore serve` (HTTP) and `lore mcp` (stdio) stay up while the config file is edited: a space added
for the session's workspace takes the next write, the result says the space changed, a broken file
fails calls with its error (file, line, fix) and a fixed one works again. Rows are checked with SQL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation, ListRootsResult, Root
from pydantic import FileUrl
from support.lorehttp import Server, start_server
from support.mcpclient import REQUEST_TIMEOUT, call, lore_session, ok, text

pytestmark = pytest.mark.anyio
TEST_TIMEOUT = 150  # seconds for a whole test: a hung server fails it instead of hanging the suite

PERSONAL = 'default_space = "personal"\n\n[[space]]\nid = "personal"\npaths = []\n'


def with_spaces(work: Path, side: Path) -> str:
    """The issue's edit: spaces `work` and `side` added; `side` covers the session's workspace."""
    return (
        PERSONAL
        + f'\n[[space]]\nid = "work"\npaths = ["{work}"]\n\n[[space]]\nid = "side"\npaths = ["{side}"]\n'
    )


BROKEN_LINE = 7  # where with_spaces' text gets its syntax error


def broken(work: Path, side: Path) -> str:
    lines = with_spaces(work, side).splitlines()
    lines[BROKEN_LINE - 1] = "[[space]"  # the `[[space]]` of `work`, unclosed
    return "\n".join(lines) + "\n"


@pytest.fixture
def dirs(tmp_path: Path, lore_env: dict[str, str]) -> dict[str, Path]:
    found = {name: tmp_path / name for name in ("work", "P2")}
    for d in found.values():
        d.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(PERSONAL)
    return found


def facts(conn: psycopg.Connection) -> dict[str, str]:
    """statement -> space of every stored fact (never through lore's code)."""
    conn.commit()  # a fresh snapshot
    return dict(conn.execute("SELECT statement, space FROM facts").fetchall())


def assert_space_change_said(result_text: str, old: str, new: str) -> None:
    assert f"space changed from `{old}` to `{new}`" in result_text, result_text


async def assert_config_error(session: ClientSession, config: Path) -> None:
    """The next call fails with the config file's error: the file, the line, the fix."""
    failed = await call(session, "remember_fact", statement="written while the config is broken")
    said = text(failed)
    assert failed.is_error, said
    assert f"{config}:{BROKEN_LINE}: invalid TOML" in said, said
    assert f"fix the syntax on line {BROKEN_LINE}" in said, said
    assert failed.structured_content is None


@pytest.fixture
def served(lore_env: dict[str, str], dirs: dict[str, Path], tmp_path: Path) -> Iterator[Server]:
    with start_server(lore_env, tmp_path / "serve.log", ready="/healthz", timeout=60) as server:
        yield server


@asynccontextmanager
async def http_session(
    url: str, headers: dict[str, str], roots: list[Path] | None = None
) -> AsyncIterator[ClientSession]:
    async def list_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(f"file://{r}")) for r in roots or ()])

    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with (
        http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            read_timeout_seconds=REQUEST_TIMEOUT,
            list_roots_callback=list_roots if roots is not None else None,
            client_info=Implementation(name="live-config", version="1"),
        ) as session,
    ):
        await session.initialize()
        yield session


async def test_http_sessions_follow_the_config_file_as_edited(
    served: Server, dirs: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    config, p2 = Path(lore_env["LORE_CONFIG"]), dirs["P2"]
    with anyio.fail_after(TEST_TIMEOUT):
        async with (
            http_session(served.url, served.local(p2)) as by_header,
            http_session(served.url, served.local(), roots=[p2]) as by_roots,  # resolved once, then cached
        ):
            for name, s in (("header", by_header), ("roots", by_roots)):
                done = await ok(s, "remember_fact", statement=f"{name}: before the edit")
                assert done.structured_content == {"id": done.structured_content["id"], "space": "personal"}
            assert (
                httpx2.get(f"{served.url}/api/spaces", headers=served.local(), timeout=10).json()["spaces"][
                    0
                ]["id"]
                == "personal"
            )

            config.write_text(with_spaces(dirs["work"], p2))
            spaces = httpx2.get(f"{served.url}/api/spaces", headers=served.local(), timeout=10).json()[
                "spaces"
            ]
            assert [s["id"] for s in spaces] == ["personal", "work", "side"]  # what the web UI lists
            for name, s in (("header", by_header), ("roots", by_roots)):
                moved = await ok(s, "remember_fact", statement=f"{name}: after the edit")
                assert moved.structured_content is not None and moved.structured_content["space"] == "side"
                assert_space_change_said(text(moved), "personal", "side")
                again = await ok(s, "remember_fact", statement=f"{name}: once more")
                assert "space changed" not in text(again)  # said once, on the first call after
            assert facts(conn) == {
                "header: before the edit": "personal",
                "roots: before the edit": "personal",
                "header: after the edit": "side",
                "roots: after the edit": "side",
                "header: once more": "side",
                "roots: once more": "side",
            }

            config.write_text(broken(dirs["work"], p2))
            for s in (by_header, by_roots):
                await assert_config_error(s, config)
                await assert_config_error(s, config)  # every call, not only the first
            api = httpx2.get(f"{served.url}/api/spaces", headers=served.local(), timeout=10)
            assert api.status_code == 422 and f"{config}:{BROKEN_LINE}" in api.json()["error"]

            config.write_text(with_spaces(dirs["work"], p2))
            for name, s in (("header", by_header), ("roots", by_roots)):
                fixed = await ok(s, "remember_fact", statement=f"{name}: after the fix")
                assert fixed.structured_content is not None and fixed.structured_content["space"] == "side"
                assert "space changed" not in text(fixed)
        rows = facts(conn)
        assert "written while the config is broken" not in rows
        assert rows["header: after the fix"] == rows["roots: after the fix"] == "side"
    assert "changed: read again" in served.logs()


async def test_stdio_session_follows_the_config_file_as_edited(
    dirs: dict[str, Path], lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    config, p2 = Path(lore_env["LORE_CONFIG"]), dirs["P2"]
    with anyio.fail_after(TEST_TIMEOUT):
        # `lore mcp` is a child of the client: closing the session stops that process.
        async with lore_session(lore_env, cwd=p2, client="stdio-live") as s:
            before = await ok(s, "remember_fact", statement="stdio: before the edit")
            assert before.structured_content is not None and before.structured_content["space"] == "personal"

            config.write_text(with_spaces(dirs["work"], p2))
            moved = await ok(s, "remember_fact", statement="stdio: after the edit")
            assert moved.structured_content is not None and moved.structured_content["space"] == "side"
            assert_space_change_said(text(moved), "personal", "side")
            recalled = text(await ok(s, "recall_facts"))  # recall reads the new space, only it
            assert "stdio: after the edit" in recalled and "before the edit" not in recalled
            assert facts(conn) == {"stdio: before the edit": "personal", "stdio: after the edit": "side"}

            config.write_text(broken(dirs["work"], p2))
            await assert_config_error(s, config)
            await assert_config_error(s, config)

            config.write_text(with_spaces(dirs["work"], p2))
            fixed = await ok(s, "remember_fact", statement="stdio: after the fix")
            assert fixed.structured_content is not None and fixed.structured_content["space"] == "side"

            config.write_text(PERSONAL)  # and back: the space that was added is gone again
            back = await ok(s, "remember_fact", statement="stdio: space removed")
            assert back.structured_content is not None and back.structured_content["space"] == "personal"
            assert_space_change_said(text(back), "side", "personal")
    assert facts(conn) == {
        "stdio: before the edit": "personal",
        "stdio: after the edit": "side",
        "stdio: after the fix": "side",
        "stdio: space removed": "personal",
    }
