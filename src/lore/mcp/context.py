"""What every tool reads: the server's lifespan context (`Served`: the runtime and the MCP sessions of
this process), through the SDK's `ctx.request_context.lifespan_context`, and how a tool answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent, ToolAnnotations

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


def tool(
    title: str,
    description: str,
    *,
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
) -> Callable[[F], F]:
    """Declare a function a tool, with its title (what a client shows a person), its description
    (short and exact: tools/list is paid for in every session's context) and its hints for the client
    (MCP ToolAnnotations): `read_only` (changes no memory), `destructive` (may hide or replace what is
    there), `idempotent` (the same call again changes nothing more). Only what differs from the
    protocol's defaults is sent, except `destructiveHint: false`, which a tool that only adds must say
    (a client takes a tool that says nothing for destructive); every tool says `openWorldHint: false`
    (it touches lore's memory only, nothing outside). Its structured result is its return type,
    `Annotated[CallToolResult, <a lore.mcp.outputs shape>]`. lore.mcp.tools lists the tools in the
    order tools/list shows them."""
    hints = (
        ToolAnnotations(read_only_hint=True, open_world_hint=False)
        if read_only
        else ToolAnnotations(
            destructive_hint=destructive, idempotent_hint=idempotent or None, open_world_hint=False
        )
    )

    def mark(fn: F) -> F:
        fn.__lore_title__ = title  # type: ignore[attr-defined]
        fn.__lore_tool__ = description  # type: ignore[attr-defined]
        fn.__lore_hints__ = hints  # type: ignore[attr-defined]
        return fn

    return mark
