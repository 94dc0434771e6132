"""The MCP server: one `MCPServer` for stdio (`lore mcp`) and streamable HTTP (`lore serve`).

The server, never the model, decides the space: each session's workspace comes from
`--workspace`, the client's environment, its MCP roots, or the working directory (HTTP: the
`X-Lore-Workspace` header, then roots). A tool call carrying any argument the tool does not declare
(notably `space`) is refused.
"""

from __future__ import annotations

import logging
import uuid
import warnings
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
from mcp.server.auth.provider import OAuthAuthorizationServerProvider, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types import Tool as MCPTool
from pydantic import ValidationError

from lore import __version__
from lore.core.clients import canonical
from lore.core.config import Config
from lore.core.errors import ConfigError, LoreError
from lore.core.session import SessionContext
from lore.core.workspace import WorkspaceSignal, choose_workspace, usable
from lore.service import retrieval
from lore.service.runtime import REMOTE_HEADER, WORKSPACE_HEADER, Runtime, file_path
from lore.store import client_names
from lore.store.replies import Replies

log = logging.getLogger("lore.mcp")
INSTRUCTIONS = (
    "lore is the memory shared by the user's coding agents. The server picks the memory space from "
    "the session's workspace; never pass a space. Recall before assuming; remember durable facts."
)
# Lines a tool call's result starts with (a session whose space changed): set by LoreServer.call_tool.
_NOTICES: ContextVar[list[str] | None] = ContextVar("lore_notices", default=None)
MAX_CACHED_SESSIONS = 1000


@dataclass(frozen=True)
class _Cached:
    """A session resolved from signals asked once (roots, cwd), and the config it was resolved with."""

    config: Config
    context: SessionContext


@dataclass
class AppState(Runtime):
    """The runtime plus what MCP sessions need: each session's resolved space, remembered."""

    _sessions: dict[str, _Cached] = field(default_factory=dict)
    # stdio serves one session per server; HTTP sessions are told apart by their MCP session id.
    stdio_session: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    # Every send_message that waits shares one LISTEN connection (started in the lifespan).
    replies: Replies = field(init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.replies = Replies(
            self._database_conninfo,
            per_user=int(self.env.get("LORE_USER_MAX_WAITS", "16")),
            total=int(self.env.get("LORE_MAX_WAITS", "1000")),
        )

    def _database_conninfo(self) -> str:
        info = self.pool().conninfo
        return str(info() if callable(info) else info)

    # The space each session was last given (key: user|session): to say so when it changes.
    _spaces: dict[str, tuple[str, Config]] = field(default_factory=dict)
    # Client names already in the client_names audit (written once per name and process).
    _names_seen: set[str] = field(default_factory=set)

    async def session(self, ctx: Context[Any, Any]) -> SessionContext:
        """This MCP session's context, resolved against the config as it is now. When the space
        changed since the session's last call (the config was edited), the tool result says so."""
        config, env, prefix = await self.scope()
        # stdio serves one client per process; HTTP sessions are told apart by their session id.
        sid = "stdio" if self.transport == "stdio" else (ctx.headers or {}).get("mcp-session-id", "")
        # The client's own name (kept on each row it writes) and lore's id for it (`source`).
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        given = info.name[:200] if info is not None and info.name else None
        source = await self._client_id(given, info.version if info else None) if given else "unknown"
        resolved = await self._session(ctx, config, env, prefix + sid if sid else "", source)
        if given and resolved.client_name != given:
            resolved = replace(resolved, client_name=given)
        if sid:
            self._track(f"{self.user() or ''}|{sid}", resolved, config)
        return resolved

    async def _session(
        self, ctx: Context[Any, Any], config: Config, env: Mapping[str, str], key: str, source: str
    ) -> SessionContext:
        remotes = (ctx.headers or {}).get(REMOTE_HEADER) if self.transport == "http" else None
        if self.transport == "http":
            header = (ctx.headers or {}).get(WORKSPACE_HEADER)
            # An unexpanded `${PWD}` or a relative path names nothing on this server: use roots.
            if usable(header) and Path(file_path(header)).is_absolute():
                signal = WorkspaceSignal(Path(file_path(header)), "header X-Lore-Workspace")
                return self.resolve(signal, config, env, source, remotes)
            if header:
                log.info("ignoring X-Lore-Workspace %r (not an absolute path); asking for roots", header[:80])
        cached = self._sessions.get(key) if key else None
        if cached is not None:
            if cached.config is config:
                return cached.context
            # The config changed: the same workspace, resolved again (roots are not asked again).
            resolved = self.resolve(cached.context.signal, config, env, source, remotes)
        else:
            roots: list[str] = []
            # Over HTTP the server's own environment and directory say nothing about the client.
            local = self.env if self.transport == "stdio" else {}
            signal = choose_workspace(self.workspace_arg, local, [], self.cwd)
            if signal.source == "cwd" or self.transport == "http":
                roots = await _roots(ctx)
                if roots or self.transport == "stdio":
                    signal = choose_workspace(self.workspace_arg, local, roots, self.cwd)
                else:
                    raise ConfigError(
                        "This HTTP session gave no workspace (no X-Lore-Workspace header, no MCP roots).",
                        "Add the header `X-Lore-Workspace: <project dir>` to the MCP server entry.",
                    )
            resolved = self.resolve(signal, config, env, source, remotes)
            log.info("session %s: %s", source, resolved.describe())
        if key:
            if len(self._sessions) > MAX_CACHED_SESSIONS:
                self._sessions.clear()
            self._sessions[key] = _Cached(config, resolved)
        return resolved

    async def _client_id(self, name: str, version: str | None) -> str:
        """lore's id for the name the client gave (`gemini-cli-mcp-client` -> `gemini`): what `source`
        says. The name itself goes into the client_names audit, once per name and process."""
        if name in self._names_seen:
            return canonical(name)
        if len(self._names_seen) > MAX_CACHED_SESSIONS:
            self._names_seen.clear()
        try:
            client = await self.run(lambda conn: client_names.record(conn, name, version))
        except Exception as exc:  # the audit never stops a tool call; the next session tries again
            log.warning("could not record client name %r: %s", name[:80], exc)
            return canonical(name)
        self._names_seen.add(name)
        return client

    def _track(self, key: str, resolved: SessionContext, config: Config) -> None:
        """Remember the space this session was given; when it differs from its last call's, add a
        notice to the tool result (an agent must not keep believing it writes where it did)."""
        last = self._spaces.get(key)
        if last is None and len(self._spaces) > MAX_CACHED_SESSIONS:
            self._spaces.clear()
        self._spaces[key] = (resolved.space, config)
        if last is None or last[0] == resolved.space:
            return
        old, new = last[0], resolved.space
        why = "the config changed: " if last[1] is not config else ""
        notice = (
            f"Note: this session's space changed from `{old}` to `{new}` since its last call "
            f"({why}{resolved.resolved.reason}); it now writes to `{new}`."
        )
        log.info("session %s: space changed from %s to %s", key.rsplit("|", 1)[-1][:12], old, new)
        notices = _NOTICES.get()
        if notices is not None and notice not in notices:
            notices.append(notice)


async def _roots(ctx: Context[Any, Any]) -> list[str]:
    caps = ctx.session.client_capabilities
    if caps is None or caps.roots is None:
        return []
    # roots/list is deprecated by the 2026-07-28 protocol, but it is still the only workspace signal
    # some clients send; the warning is raised when the call is made, so only that is silenced.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        pending = ctx.session.list_roots()
    try:
        with anyio.fail_after(3):
            result = await pending
    except Exception as exc:  # a client that advertises roots but cannot answer: fall back to cwd
        log.info("roots/list failed: %r", exc)
        return []
    return [str(root.uri) for root in result.roots]


def result(text: str, structured: dict[str, Any]) -> CallToolResult:
    """A tool's answer: compact text for the model, the same facts as structured content."""
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


class LoreServer(MCPServer[AppState]):
    """Refuses undeclared arguments (a `space` above all) before any tool code runs."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[AppState, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            declared = set(tool.parameters.get("properties", {}))
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
        notices: list[str] = []  # filled by AppState.session when this session's space changed
        token = _NOTICES.set(notices)
        try:
            result = await super().call_tool(name, arguments, context)
        except ToolError as exc:
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
            _NOTICES.reset(token)
        if notices and isinstance(result, CallToolResult):
            notes = [TextContent(type="text", text=line) for line in notices]
            result = result.model_copy(update={"content": [*notes, *result.content]})
        return result

    async def run_stdio_async(self) -> None:
        """stdio with every malformed request answered (lore.mcp.stdio_guard), never left hanging."""
        from lore.mcp import stdio_guard

        await stdio_guard.serve(self._lowlevel_server)

    async def list_tools(self) -> list[MCPTool]:
        from lore.mcp.schema import compact

        return [
            t.model_copy(update={"input_schema": compact(t.input_schema)}) for t in await super().list_tools()
        ]


def _explain(tool: str, error: ValidationError) -> str:
    """A wrong-typed argument, said in one line per field, without echoing the value back."""
    problems = []
    for item in error.errors():
        field = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"{field}: {item['msg'].lower()} (got {type(item.get('input')).__name__})")
    return f"Invalid arguments for {tool}: {'; '.join(problems)}.\nFix these arguments and call {tool} again."


def create_server(
    state: AppState,
    *,
    token_verifier: TokenVerifier | None = None,
    auth: AuthSettings | None = None,
    auth_server_provider: OAuthAuthorizationServerProvider[Any, Any, Any] | None = None,
) -> LoreServer:
    from contextlib import asynccontextmanager

    from lore.mcp import search_tools, tools, work_tools

    # Each concern registers its own tools (one module each); order = order in tools/list.
    registrars = [tools.register, search_tools.register, work_tools.register]

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppState]) -> Any:
        state.warm()
        retrieval.start(state)  # background embedding; loads no model until a row needs one
        try:
            async with anyio.create_task_group() as group:
                state.replies.attach(group)  # the reply listener runs here, started on first wait
                yield state
                group.cancel_scope.cancel()
        finally:
            await anyio.to_thread.run_sync(state.close)

    server = LoreServer(
        "lore",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        token_verifier=token_verifier,
        auth=auth,
        auth_server_provider=auth_server_provider,
    )
    for register in registrars:
        register(server, state)
    return server
