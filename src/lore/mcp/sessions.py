"""Which session a tool call belongs to, and its point of view (lore.core.session.SessionContext).

The workspace comes from the server's `--workspace`, the client's environment, its MCP roots or the
working directory (over HTTP: the `X-Lore-Workspace` header, then roots); it is asked for once per
MCP session and resolved again against the config as it is now on every call. When a session's
space changes between two calls (the config was edited), the next tool result says so.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPDeprecationWarning

from lore.core import session_ids
from lore.core.config import Config
from lore.core.errors import ConfigError
from lore.core.session import SessionContext, session_tag
from lore.core.workspace import WorkspaceSignal, choose_workspace, usable
from lore.service import mcp_sessions
from lore.service.runtime import REMOTE_HEADER, WORKSPACE_HEADER, Runtime, file_path

log = logging.getLogger("lore.mcp")
MAX_CACHED_SESSIONS = 1000
# Lines a tool call's result starts with (a session whose space changed): set by LoreServer.call_tool.
NOTICES: ContextVar[list[str] | None] = ContextVar("lore_notices", default=None)


@dataclass(frozen=True)
class _Cached:
    """A session resolved from signals asked once (roots, cwd), and the config it was resolved with."""

    config: Config
    context: SessionContext


@dataclass
class Sessions:
    """The MCP sessions of one server process: each one's resolved workspace, and its last space."""

    runtime: Runtime
    _sessions: dict[str, _Cached] = field(default_factory=dict)
    # The space each session was last given (key: user|session): to say so when it changes.
    _spaces: dict[str, tuple[str, Config]] = field(default_factory=dict)

    def key(self, ctx: Context[Any, Any]) -> str | None:
        """Who "this session" is, so that it never reads its own messages (None: unknown)."""
        if self.runtime.transport == "stdio":
            return self.runtime.stdio_session
        session_id = (ctx.headers or {}).get("mcp-session-id")
        return str(session_id) if session_id else None

    async def session(self, ctx: Context[Any, Any]) -> SessionContext:
        """This MCP session's context, resolved against the config as it is now."""
        rt = self.runtime
        config, env, prefix = await rt.scope()
        # stdio serves one client per process; HTTP sessions are told apart by their session id.
        sid = "stdio" if rt.transport == "stdio" else (ctx.headers or {}).get("mcp-session-id", "")
        # The client's own name (kept on each row it writes) and lore's id for it (`source`): from
        # its `initialize` (a session this process holds) or from the request itself (a 2026-07-28
        # request's envelope; a stateless server's session id, lore.core.session_ids).
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        given = info.name[:200] if info is not None and info.name else None
        version = info.version if info else None
        if given is None and (carried := session_ids.client_of(sid)) is not None:
            given, version = carried
        source = await anyio.to_thread.run_sync(rt.client_id, given, version) if given else "unknown"
        resolved = await self._session(ctx, config, env, prefix + sid if sid else "", source)
        if given and resolved.client_name != given:
            resolved = replace(resolved, client_name=given)
        key = self.key(ctx)
        tag = session_tag(f"{rt.user()}|{key}") if key else None
        if resolved.session_key != tag:
            resolved = replace(resolved, session_key=tag)
        if sid:
            await self._track(
                session_ids.state_key(rt.user(), sid), resolved, config, session_ids.issued(sid)
            )
        return resolved

    async def _session(
        self, ctx: Context[Any, Any], config: Config, env: Mapping[str, str], key: str, source: str
    ) -> SessionContext:
        rt = self.runtime
        remotes = (ctx.headers or {}).get(REMOTE_HEADER) if rt.transport == "http" else None
        if rt.transport == "http":
            header = (ctx.headers or {}).get(WORKSPACE_HEADER)
            # An unexpanded `${PWD}` or a relative path names nothing on this server: use roots.
            if usable(header) and Path(file_path(header)).is_absolute():
                signal = WorkspaceSignal(Path(file_path(header)), "header X-Lore-Workspace")
                return await _resolve(rt, signal, config, env, source, remotes)
            if header:
                log.info("ignoring X-Lore-Workspace %r (not an absolute path); asking for roots", header[:80])
        cached = self._sessions.get(key) if key else None
        if cached is not None:
            if cached.config is config:
                return cached.context
            # The config changed: the same workspace, resolved again (roots are not asked again).
            resolved = await _resolve(rt, cached.context.signal, config, env, source, remotes)
        else:
            roots: list[str] = []
            # Over HTTP the server's own environment and directory say nothing about the client.
            local = rt.env if rt.transport == "stdio" else {}
            signal = choose_workspace(rt.workspace_arg, local, [], rt.cwd)
            if signal.source == "cwd" or rt.transport == "http":
                roots = await _roots(ctx)
                if roots or rt.transport == "stdio":
                    signal = choose_workspace(rt.workspace_arg, local, roots, rt.cwd)
                else:
                    raise ConfigError(
                        "This HTTP session gave no workspace (no X-Lore-Workspace header, no MCP roots).",
                        "Add the header `X-Lore-Workspace: <project dir>` to the MCP server entry.",
                    )
            resolved = await _resolve(rt, signal, config, env, source, remotes)
            log.info("session %s: %s", source, resolved.describe())
        if key:
            if len(self._sessions) > MAX_CACHED_SESSIONS:
                self._sessions.clear()
            self._sessions[key] = _Cached(config, resolved)
        return resolved

    async def _track(self, key: str, resolved: SessionContext, config: Config, shared: bool) -> None:
        """Remember the space this session was given; when it differs from its last call's, add a
        notice to the tool result (an agent must not keep believing it writes where it did).

        A session of a stateless server (`shared`: any replica may have served its last call) is
        recorded in the database; this process's own record saves that round trip while the space
        and the config are the ones it recorded (a change of space needs a change of config, which
        every replica sees as a new Config)."""
        last = self._spaces.get(key)
        if last is None and len(self._spaces) > MAX_CACHED_SESSIONS:
            self._spaces.clear()
        self._spaces[key] = (resolved.space, config)
        old = last[0] if last is not None else None
        config_changed = last is not None and last[1] is not config
        if shared and (last is None or last[0] != resolved.space or config_changed):
            old = await anyio.to_thread.run_sync(mcp_sessions.swap_space, self.runtime, key, resolved.space)
            config_changed = last is None or config_changed
        if old is None or old == resolved.space:
            return
        new = resolved.space
        why = "the config changed: " if config_changed else ""
        notice = (
            f"Note: this session's space changed from `{old}` to `{new}` since its last call "
            f"({why}{resolved.resolved.reason}); it now writes to `{new}`."
        )
        log.info("session %s: space changed from %s to %s", key.rsplit("|", 1)[-1][-12:], old, new)
        notices = NOTICES.get()
        if notices is not None and notice not in notices:
            notices.append(notice)


async def _resolve(
    rt: Runtime,
    signal: WorkspaceSignal,
    config: Config,
    env: Mapping[str, str],
    source: str,
    remotes: str | None,
) -> SessionContext:
    """Runtime.resolve on a worker thread: it reads the workspace's git files, which belong to the
    repository (a FIFO or a huge file there must never stop the event loop every session shares)."""
    return await anyio.to_thread.run_sync(rt.resolve, signal, config, env, source, remotes)


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
