"""The MCP server: one `MCPServer` for stdio (`lore mcp`) and streamable HTTP (`lore serve`).

The server, never the model, decides the space: each session's workspace comes from
`--workspace`, the client's environment, its MCP roots, or the working directory (HTTP: the
`X-Lore-Workspace` header, then roots). A tool call carrying any argument the tool does not declare
(notably `space`) is refused.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.auth.provider import OAuthAuthorizationServerProvider, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from lore import __version__
from lore.core.errors import DatabaseError, LoreError
from lore.mcp.context import Served
from lore.mcp.sessions import NOTICES, Sessions
from lore.mcp.tools import TOOLS
from lore.service import metrics, retrieval
from lore.service.runtime import Runtime

log = logging.getLogger("lore.mcp")
INSTRUCTIONS = (
    "lore is the memory shared by the user's coding agents. The server picks the memory space from "
    "the session's workspace; never pass a space. Recall before assuming; remember durable facts."
)


class LoreServer(MCPServer[Served]):
    """Refuses undeclared arguments (a `space` above all) before any tool code runs."""

    _lore_declared: dict[str, frozenset[str]] | None = None  # each tool's arguments (its input schema)

    async def declared(self, name: str) -> frozenset[str] | None:
        """The arguments tool `name` declares (None: no such tool), read once from the SDK's list."""
        if self._lore_declared is None:
            tools = await super().list_tools()
            self._lore_declared = {t.name: frozenset(t.input_schema.get("properties", {})) for t in tools}
        return self._lore_declared.get(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Served, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        declared = await self.declared(name)
        known = declared is not None
        if declared is not None:
            extra = sorted(set(arguments) - declared)
            if "space" in extra:
                raise ToolError(
                    "Refused: tools take no `space`. lore picks the space from this session's workspace.\n"
                    "Call again without `space`; to write elsewhere, open a session in that project "
                    "(tasks and messages to other spaces use file_task/send_message `to`)."
                )
            if extra:
                raise ToolError(
                    f"Unknown argument(s) for {name}: {', '.join(extra)}.\n"
                    f"Use only: {', '.join(sorted(declared)) or 'no arguments'}."
                )
        notices: list[str] = []  # filled by Sessions.session when this session's space changed
        token = NOTICES.set(notices)
        started, outcome = time.monotonic(), "failed"
        try:
            result = await super().call_tool(name, arguments, context)
            outcome = "error" if isinstance(result, CallToolResult) and result.is_error else "ok"
        except ToolError as exc:
            outcome = _outcome(exc)
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(_explain(name, exc.__cause__)) from exc
            said = str(exc)
            if isinstance(exc.__cause__, LoreError):
                # lore's own refusal: its message and hint reach the model (the SDK would hide them
                # as an unexpected error); nothing else from an exception ever does.
                said = f"Error executing tool {name}: {exc.__cause__}"
            if notices:
                said = "\n".join([*notices, said])
            if said != str(exc):
                raise ToolError(said) from exc.__cause__
            raise
        finally:
            NOTICES.reset(token)
            if known:  # an unknown tool's name is the caller's text: never a label
                metrics.tool_call(name, outcome, time.monotonic() - started)
        if notices and isinstance(result, CallToolResult):
            notes = [TextContent(type="text", text=line) for line in notices]
            result = result.model_copy(update={"content": [*notes, *result.content]})
        return result

    async def run_stdio_async(self) -> None:
        """stdio with every malformed request answered (lore.mcp.stdio_guard), never left hanging."""
        from lore.mcp import stdio_guard

        await stdio_guard.serve(self._lowlevel_server)

    async def list_tools(self) -> list[MCPTool]:
        from lore.mcp.schema import compact, compact_output

        return [
            t.model_copy(
                update={
                    "input_schema": compact(t.input_schema),
                    "output_schema": compact_output(t.output_schema) if t.output_schema else None,
                }
            )
            for t in await super().list_tools()
        ]


def _outcome(exc: ToolError) -> str:
    """A tool error for /metrics: `unavailable` (the database: call again), `error` (lore refused the
    call: the caller's to fix), `failed` (anything else)."""
    cause = exc.__cause__
    if isinstance(cause, DatabaseError):
        return "unavailable"
    if isinstance(cause, (LoreError, ValidationError)):
        return "error"
    return "failed"


def _explain(tool: str, error: ValidationError) -> str:
    """A wrong-typed argument, said in one line per field, without echoing the value back."""
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{field}: {item['msg'].lower()} (got {type(item.get('input')).__name__})")
    return f"Invalid arguments for {tool}: {'; '.join(problems)}.\nFix these arguments and call {tool} again."


def create_server(
    runtime: Runtime,
    *,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    auth_server_provider: OAuthAuthorizationServerProvider[Any, Any, Any] | None = None,
) -> LoreServer:
    """The MCP server over `runtime`: every tool of lore.mcp.tools, in its order. The tools read the
    runtime from the lifespan context (`Served`), which also holds this process's MCP sessions."""

    @asynccontextmanager
    async def lifespan(_: MCPServer[Served]) -> AsyncIterator[Served]:
        runtime.warm()
        retrieval.start(runtime)  # background embedding; loads no model until a row needs one
        try:
            async with anyio.create_task_group() as group:
                runtime.replies.attach(group)  # the reply listener runs here, started on first wait
                yield Served(runtime, Sessions(runtime))
                group.cancel_scope.cancel()
        finally:
            await anyio.to_thread.run_sync(runtime.close)

    server = LoreServer(
        "lore",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        token_verifier=token_verifier,
        auth=auth,
        auth_server_provider=auth_server_provider,
    )
    for tool in TOOLS:
        server.add_tool(
            tool,
            name=tool.__name__,
            title=tool.__lore_title__,  # type: ignore[attr-defined]
            description=tool.__lore_tool__,  # type: ignore[attr-defined]
            annotations=tool.__lore_hints__,  # type: ignore[attr-defined]
            structured_output=True,  # every tool declares its result's shape (lore.mcp.outputs)
        )
    return server
