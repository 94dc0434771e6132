"""Where and who a call's session is: the workspace a command or a client names, resolved to a
session (lore.core.session: its space, its readable spaces), cached for a moment; and the name a
client gave, as lore's client id (its `source`), recorded once in the client_names audit."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

import anyio

from lore.core.clients import canonical
from lore.core.config import Config
from lore.core.session import SessionContext, build
from lore.core.workspace import WorkspaceSignal, command_signal
from lore.service.runtime.configs import Configs
from lore.service.runtime.connections import Transact
from lore.store import client_names

log = logging.getLogger("lore.service.runtime")
# A workspace a client names (header, API parameter) resolves to the same session for this long,
# for the same config: an HTTP client names it on every call, and resolving it (realpath, git) was a
# tenth of a call's CPU (docs/benchmarks.md, HTTP floors). A moved folder or a new remote is seen
# after at most this long; a config change at once (a new Config is a new key).
RESOLVE_TTL = 2.0
# The HTTP header a client names its workspace with (MCP over HTTP, /api, the hosted hook).
WORKSPACE_HEADER = "x-lore-workspace"
# The git remotes of that workspace, comma-separated, when the client can tell them: in sign-in mode
# the server never looks at a path on its own disk, so this is all its remote rule sees.
REMOTE_HEADER = "x-lore-remote"
MAX_NAMES_SEEN = 1000


class Sessions:
    """Workspaces to sessions, under the config of the call (`configs`)."""

    def __init__(self, env: Mapping[str, str], cwd: str, configs: Configs) -> None:
        self.env = env
        self.cwd = cwd
        self.configs = configs
        # (workspace, rule, source, remotes) -> (config, when, session): see RESOLVE_TTL.
        self._resolved: dict[tuple[str, str, str, str | None], tuple[Config, float, SessionContext]] = {}

    def command_session(self, workspace: str | None, source: str = "cli") -> SessionContext:
        """The session of a `lore` command: `--workspace DIR` (made absolute against the working
        directory) if given, else the same signals as `lore mcp` (the client's variables, then the
        working directory). One rule for every command."""
        return build(command_signal(workspace, self.env, self.cwd), self.configs.current(), self.env, source)

    async def session_for(
        self, workspace: str, source: str, rule: str, remotes: str | None = None
    ) -> SessionContext:
        """A session for a workspace named by the client (header, API parameter)."""
        config, env, _ = await self.configs.scope()
        signal = WorkspaceSignal(Path(file_path(workspace)), rule)
        # on a worker thread: resolving reads the workspace's git files (never on the event loop)
        return await anyio.to_thread.run_sync(self.resolve, signal, config, env, source, remotes)

    def resolve(
        self,
        signal: WorkspaceSignal,
        config: Config,
        env: Mapping[str, str],
        source: str,
        remotes: str | None = None,
    ) -> SessionContext:
        """The session for a workspace. In sign-in mode the path is the user's, on their machine:
        resolved as written (lore.spaces, lexical), never against this server's disk. The same
        workspace with the same config resolves once per RESOLVE_TTL."""
        key = (str(signal.path), signal.source, source, remotes)
        now = time.monotonic()
        cached = self._resolved.get(key)
        if cached is not None and cached[0] is config and now - cached[1] < RESOLVE_TTL:
            return cached[2]
        if self.configs.accounts is None:
            resolved = build(signal, config, env, source)
        else:
            named = [r.strip() for r in (remotes or "").split(",") if r.strip()][:8]
            resolved = build(signal, config, env, source, lexical=True, remotes=named)
        if len(self._resolved) > 4096:
            self._resolved.clear()
        self._resolved[key] = (config, now, resolved)
        return resolved


class ClientNames:
    """Client names to lore's client ids, each name recorded once per process in the audit."""

    def __init__(self, transact: Transact) -> None:
        self._transact = transact
        # Client names already in the client_names audit (written once per name and process).
        self._seen: set[str] = set()

    def client_id(self, name: str, version: str | None) -> str:
        """lore's id for the name a client gave (`gemini-cli-mcp-client` -> `gemini`): what `source`
        says. The name itself goes into the client_names audit, once per name and process; the
        audit never stops a call (the next session tries again)."""
        if name in self._seen:
            return canonical(name)
        if len(self._seen) > MAX_NAMES_SEEN:
            self._seen.clear()
        try:
            client = self._transact(client_names.record, name, version)
        except Exception as exc:
            log.warning("could not record client name %r: %s", name[:80], exc)
            return canonical(name)
        self._seen.add(name)
        return client


def file_path(value: str) -> str:
    """A workspace given as a `file://` URI or a plain path, as a path."""
    if value.startswith("file://"):
        return unquote(urlparse(value).path)
    return value
