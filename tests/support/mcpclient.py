"""Real MCP client sessions (the SDK's client) against lore's MCP server.

`lore_session` runs the server in this process (the SDK's in-memory transport, the initialize
handshake as over stdio): the same `create_server` and `Runtime` that `lore mcp` runs, resolving
the workspace from the same signals (`--workspace`, the environment it is given, roots, its working
directory), without paying for a process per test. `lore_stdio_session` spawns the real `lore mcp`
over stdio: for what only the process shows (the stdio framing, argv, process exit).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client, ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, Implementation, ListRootsResult, Root, TextContent

LORE_BIN = str(Path(sys.executable).parent / "lore")
# Every request of a test session gets an answer within this, or fails (a hung server fails the test
# instead of hanging the suite; a tool waits at most 60 s, send_message's longest wait_seconds).
REQUEST_TIMEOUT = 120.0


def _roots_callback(roots: Sequence[Path] | None) -> Any:
    async def list_roots(_: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=f"file://{r}") for r in roots or ()])  # type: ignore[arg-type]

    return list_roots if roots is not None else None


@asynccontextmanager
async def lore_session(
    env: dict[str, str],
    *,
    cwd: Path | str | None = None,
    workspace: Path | str | None = None,
    client: str = "test-client",
    roots: Sequence[Path] | None = None,
) -> AsyncIterator[ClientSession]:
    """A session with lore's MCP server run in this process, as `lore mcp [--workspace W]` started
    in `cwd` with environment `env` would be."""
    from lore.mcp.server import create_server
    from lore.service.runtime import Runtime

    state = Runtime(
        env=dict(env),
        transport="stdio",
        workspace_arg=str(workspace) if workspace else None,
        cwd=str(cwd) if cwd else str(Path.cwd()),
    )
    async with Client(
        create_server(state),
        mode="legacy",  # the initialize handshake, as every agent does it over stdio
        read_timeout_seconds=REQUEST_TIMEOUT,
        list_roots_callback=_roots_callback(roots),
        client_info=Implementation(name=client, version="1.0"),
    ) as connected:
        yield connected.session


@asynccontextmanager
async def lore_stdio_session(
    env: dict[str, str],
    *,
    cwd: Path | str | None = None,
    workspace: Path | str | None = None,
    client: str = "test-client",
    roots: Sequence[Path] | None = None,
    binary: str = LORE_BIN,
) -> AsyncIterator[ClientSession]:
    """A session with a real `lore mcp` process over stdio (`binary`: another install's `lore`)."""
    args = ["mcp"] + (["--workspace", str(workspace)] if workspace else [])
    params = StdioServerParameters(command=binary, args=args, env=env, cwd=str(cwd) if cwd else None)
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read,
            write,
            read_timeout_seconds=REQUEST_TIMEOUT,
            list_roots_callback=_roots_callback(roots),
            client_info=Implementation(name=client, version="1.0"),
        ) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    return await session.call_tool(tool, arguments)


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def ok(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    """Call a tool that must succeed; the assertion shows the server's error otherwise."""
    result = await call(session, tool, **arguments)
    assert not result.is_error, text(result)
    return result
