"""Real MCP client sessions (the SDK's client) against `lore mcp` over stdio."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, Implementation, ListRootsResult, Root, TextContent

LORE_BIN = str(Path(sys.executable).parent / "lore")
# Every request of a test session gets an answer within this, or fails (a hung server fails the test
# instead of hanging the suite; a tool waits at most 60 s, send_message's longest wait_seconds).
REQUEST_TIMEOUT = 120.0


@asynccontextmanager
async def lore_session(
    env: dict[str, str],
    *,
    cwd: Path | str | None = None,
    workspace: Path | str | None = None,
    client: str = "test-client",
    roots: Sequence[Path] | None = None,
) -> AsyncIterator[ClientSession]:
    args = ["mcp"] + (["--workspace", str(workspace)] if workspace else [])
    params = StdioServerParameters(command=LORE_BIN, args=args, env=env, cwd=str(cwd) if cwd else None)

    async def list_roots(_: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=f"file://{r}") for r in roots or ()])  # type: ignore[arg-type]

    callback = list_roots if roots is not None else None
    async with (
        stdio_client(params) as (read, write),
        ClientSession(
            read,
            write,
            read_timeout_seconds=REQUEST_TIMEOUT,
            list_roots_callback=callback,
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
