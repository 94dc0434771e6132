"""What every tool reads: the server's lifespan context (`Served`: the runtime and the MCP sessions of
this process), through the SDK's `ctx.request_context.lifespan_context`, and how a tool answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent

from lore.core.session import SessionContext
from lore.mcp.sessions import Sessions
from lore.service.runtime import Runtime

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Served:
    runtime: Runtime
    sessions: Sessions


def served(ctx: Context[Any, Any]) -> Served:
    state = ctx.request_context.lifespan_context
    assert isinstance(state, Served)
    return state


async def session(ctx: Context[Any, Any]) -> tuple[Runtime, SessionContext]:
    """The runtime and this call's session (its workspace, space and what it reads)."""
    state = served(ctx)
    return state.runtime, await state.sessions.session(ctx)


def result(text: str, structured: dict[str, Any]) -> CallToolResult:
    """A tool's answer: compact text for the model, the same facts as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def tool(description: str) -> Callable[[F], F]:
    """Declare a function a tool, with its description (short and exact: tools/list is paid for in
    every session's context). lore.mcp.tools lists the tools in the order tools/list shows them."""

    def mark(fn: F) -> F:
        fn.__lore_tool__ = description  # type: ignore[attr-defined]
        return fn

    return mark
