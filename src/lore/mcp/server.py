"""The MCP server: one `MCPServer` for stdio (`lore mcp`) and streamable HTTP (`lore serve`).

The server, never the model, decides the space: each session's workspace comes from
`--workspace`, the client's environment, its MCP roots, or the working directory (HTTP: the
`X-Lore-Workspace` header, then roots). A tool call carrying any argument the tool does not declare
(notably `space`) is refused.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import unquote, urlparse

import anyio
import psycopg
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import OAuthAuthorizationServerProvider, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, InputRequiredResult, TextContent
from mcp_types import Tool as MCPTool
from psycopg_pool import ConnectionPool
from pydantic import ValidationError

from lore import __version__
from lore.config import Config, LiveConfig
from lore.db import connect as db
from lore.errors import ConfigError, Conflict, LoreError, Refused
from lore.redact import redact
from lore.session import SessionContext, build
from lore.workspace import WorkspaceSignal, choose_workspace, usable

if TYPE_CHECKING:
    from lore.http.accounts import Accounts

log = logging.getLogger("lore.mcp")
T = TypeVar("T")
WORKSPACE_HEADER = "x-lore-workspace"
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
class AppState:
    """What every tool call needs: config, database pool, and each session's resolved space."""

    env: Mapping[str, str]
    transport: Literal["stdio", "http"]
    workspace_arg: str | None = None
    cwd: str = field(default_factory=os.getcwd)
    _live: LiveConfig = field(init=False)
    _pool: ConnectionPool | None = None
    _pool_lock: threading.Lock = field(default_factory=threading.Lock)
    _sessions: dict[str, _Cached] = field(default_factory=dict)
    # The space each session was last given (key: user|session): to say so when it changes.
    _spaces: dict[str, tuple[str, Config]] = field(default_factory=dict)
    # Sign-in mode (`lore serve --sign-in`): each request's user and their config from the database.
    accounts: Accounts | None = None
    # lore.embed_worker.Retrieval: the embedder (loaded lazily) and the background embedding worker.
    retrieval: Any = None

    def __post_init__(self) -> None:
        self._live = LiveConfig(self.env)

    def user(self) -> str | None:
        """The signed-in user of the current request in sign-in mode; None in local mode."""
        if self.accounts is None:
            return None
        token = get_access_token()
        if token is None or not token.subject:
            raise Refused("This request is not signed in.", "Send `Authorization: Bearer <lore token>`.")
        return token.subject

    def config(self) -> Config:
        if self.accounts is not None:
            return self.accounts.get(self.user() or "").config
        return self._local_config()

    def _local_config(self) -> Config:
        """The config file as it is now: one os.stat per call, parsed again when it changed. An
        invalid file raises its ConfigError (file, line, fix), never the last good config."""
        live, loads = self._live, self._live.loads
        try:
            config = live.get()
        except ConfigError as exc:
            if live.loads != loads:
                log.warning("config %s is not usable: %s", live.path, exc.message)
            raise
        if loads and live.loads != loads:
            log.info("config %s changed: read again (spaces: %s)", live.path, ", ".join(config.ids))
        return config

    def pool(self) -> ConnectionPool:
        """Opened on first use (so `initialize` never waits for the database), migrated once."""
        with self._pool_lock:
            if self._pool is None:
                target = db.target(self._database_url(), self.env)
                with db.connect(target.url) as conn:
                    from lore.db import migrate

                    migrate.upgrade(conn)
                self._pool = ConnectionPool(
                    target.url,
                    min_size=1,
                    max_size=int(self.env.get("LORE_POOL_SIZE", "4")),
                    check=ConnectionPool.check_connection,
                    kwargs={"options": "-c statement_timeout=30000", "application_name": "lore"},
                    open=True,
                    name="lore",
                )
            return self._pool

    def _database_url(self) -> str | None:
        if self.accounts is None:
            return self._local_config().database_url
        try:  # a server in sign-in mode needs no config file (LORE_DATABASE_URL is enough)
            return self._local_config().database_url
        except ConfigError:
            return None

    def warm(self) -> None:
        """Start the database in the background so the first tool call does not wait for it."""

        def run() -> None:
            try:
                self.pool()
            except LoreError as exc:
                log.warning("database not ready yet: %s", exc.message)
            except Exception:  # never let warm-up kill the server; the first call reports it
                log.exception("database warm-up failed")

        threading.Thread(target=run, name="lore-warm", daemon=True).start()

    def close(self) -> None:
        if self.retrieval is not None:
            self.retrieval.close()
        if self._pool is not None:
            self._pool.close()

    async def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        def call() -> T:
            for attempt in range(3):
                try:
                    with db.translated(), self.connection() as conn:
                        return fn(conn)
                except Conflict as exc:
                    # PostgreSQL rolled the whole transaction back (a deadlock between two sessions'
                    # writes): nothing was written, so running it again is safe.
                    if attempt == 2 or not isinstance(exc.__cause__, db.ROLLED_BACK):
                        raise
                    time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))
            raise AssertionError("unreachable")

        return await anyio.to_thread.run_sync(call)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection. When none comes in time (the database was killed, restarted or is
        down), the pool is replaced by a fresh one (starting the embedded server again if it is
        not running) and asked once more: a live session recovers by itself, without waiting out
        the old pool's reconnection backoff. Only getting a connection is retried, never a call."""
        pool = self.pool()
        wait = float(self.env.get("LORE_POOL_TIMEOUT", "10"))
        try:
            conn = pool.getconn(timeout=min(wait, 3.0))
        except psycopg.OperationalError as exc:  # PoolTimeout included
            stats = pool.get_stats()
            if stats.get("pool_size", 0) >= pool.max_size and not stats.get("pool_available", 0):
                conn = pool.getconn(timeout=wait)  # every connection is busy: the database is fine
            else:
                log.warning("no database connection (%s); reconnecting", redact(str(exc)).splitlines()[0])
                self._drop_pool(pool)
                pool = self.pool()
                conn = pool.getconn(timeout=wait)
        try:
            with conn:
                yield conn
        finally:
            pool.putconn(conn)

    def _drop_pool(self, pool: ConnectionPool) -> None:
        with self._pool_lock:
            if self._pool is pool:
                self._pool = None
        closing = threading.Thread(target=pool.close, kwargs={"timeout": 5}, name="lore-close", daemon=True)
        closing.start()

    async def scope(self) -> tuple[Config, Mapping[str, str], str]:
        """(config, environment to resolve with, cache prefix) for the current request."""
        user = self.user()
        if self.accounts is None or user is None:
            return self.config(), self.env, ""
        account = await self.accounts.fresh(user)
        return account.config, account.env(), f"{user}|{account.version}|"

    async def session_for(self, workspace: str, source: str, rule: str) -> SessionContext:
        """A session for a workspace named by the client (header, API parameter)."""
        config, env, _ = await self.scope()
        return build(WorkspaceSignal(Path(_path(workspace)), rule), config, env, source)

    async def session(self, ctx: Context[Any, Any]) -> SessionContext:
        """This MCP session's context, resolved against the config as it is now. When the space
        changed since the session's last call (the config was edited), the tool result says so."""
        config, env, prefix = await self.scope()
        # stdio serves one client per process; HTTP sessions are told apart by their session id.
        sid = "stdio" if self.transport == "stdio" else (ctx.headers or {}).get("mcp-session-id", "")
        resolved = await self._session(ctx, config, env, prefix + sid if sid else "")
        if sid:
            self._track(f"{self.user() or ''}|{sid}", resolved, config)
        return resolved

    async def _session(
        self, ctx: Context[Any, Any], config: Config, env: Mapping[str, str], key: str
    ) -> SessionContext:
        params = ctx.session.client_params
        source = params.client_info.name if params is not None and params.client_info else "unknown"
        if self.transport == "http":
            header = (ctx.headers or {}).get(WORKSPACE_HEADER)
            # An unexpanded `${PWD}` or a relative path names nothing on this server: use roots.
            if usable(header) and Path(_path(header)).is_absolute():
                signal = WorkspaceSignal(Path(_path(header)), "header X-Lore-Workspace")
                return build(signal, config, env, source)
            if header:
                log.info("ignoring X-Lore-Workspace %r (not an absolute path); asking for roots", header[:80])
        cached = self._sessions.get(key) if key else None
        if cached is not None:
            if cached.config is config:
                return cached.context
            # The config changed: the same workspace, resolved again (roots are not asked again).
            resolved = build(cached.context.signal, config, env, source)
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
            resolved = build(signal, config, env, source)
            log.info("session %s: %s", source, resolved.describe())
        if key:
            if len(self._sessions) > MAX_CACHED_SESSIONS:
                self._sessions.clear()
            self._sessions[key] = _Cached(config, resolved)
        return resolved

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
    try:
        with anyio.fail_after(3):
            result = await ctx.session.list_roots()
    except Exception as exc:  # a client that advertises roots but cannot answer: fall back to cwd
        log.info("roots/list failed: %r", exc)
        return []
    return [str(root.uri) for root in result.roots]


def _path(value: str) -> str:
    if value.startswith("file://"):
        return unquote(urlparse(value).path)
    return value


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
            if notices:
                raise ToolError("\n".join([*notices, str(exc)])) from exc
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
        search_tools.start(state)  # background embedding; loads no model until a row needs one
        try:
            yield state
        finally:
            await anyio.to_thread.run_sync(state.close)

    server = LoreServer(
        "lore", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
        token_verifier=token_verifier, auth=auth, auth_server_provider=auth_server_provider,
    )  # fmt: skip
    for register in registrars:
        register(server, state)
    return server
