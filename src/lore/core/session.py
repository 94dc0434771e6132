"""A session's point of view: which workspace, which space (and why), what it may read, who writes.

Built once per agent session from signals the client gives (never from the model): the same
`spaces.resolve` serves the MCP server, the hook, the CLI and the HTTP server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lore.core.config import Config
from lore.core.spaces import Resolved, resolve
from lore.core.workspace import GitInfo, WorkspaceSignal, git_info, workspace_name


@dataclass(frozen=True)
class Origin:
    """Where a write comes from: the session space, the client, the workspace path."""

    space: str
    source: str
    workspace: str | None
    client_name: str | None = None  # what the agent called itself in MCP's initialize (audit)
    session: str | None = None  # which agent session (a hash: lore.core.session.session_tag); None: a command


def session_tag(key: str) -> str:
    """What a note keeps of the session that wrote it (its context is the note before it in the same
    session): a hash of the session's key, never the key itself (an HTTP session id is a credential)."""
    import hashlib

    return hashlib.sha256(key.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SessionContext:
    signal: WorkspaceSignal
    resolved: Resolved
    readable: tuple[str, ...]
    workspace_name: str
    source: str
    root: Path  # "here" for handoffs: the git top-level (a worktree's own), else the directory
    client_name: str | None = None  # MCP sessions: the clientInfo.name that `source` was made from
    session_key: str | None = None  # MCP sessions: lore.core.session.session_tag of the session

    @property
    def space(self) -> str:
        return self.resolved.space

    @property
    def origin(self) -> Origin:
        return Origin(
            self.resolved.space, self.source, str(self.signal.path), self.client_name, self.session_key
        )

    def describe(self) -> str:
        reads = [s for s in self.readable if s != self.space]
        also = f"; also reads {', '.join(reads)}" if reads else ""
        return (
            f"workspace {self.signal.path} (from {self.signal.source}) -> space {self.space} "
            f"({self.resolved.reason}){also}"
        )


def build(
    signal: WorkspaceSignal,
    config: Config,
    env: Mapping[str, str],
    source: str,
    *,
    lexical: bool = False,
    remotes: Sequence[str] = (),
) -> SessionContext:
    """Resolve the space for a workspace signal; raises SpaceError/AmbiguousSpace with the fix.

    `lexical` (sign-in mode: the path names a directory on the user's machine, not the server's):
    paths are compared as written, nothing on this machine's disk is looked at (no symlinks
    resolved, no `.git` read), and the remote rule sees only the `remotes` the client named."""
    path = Path(signal.path)
    if lexical:
        git = GitInfo(path, path, tuple(remotes)) if remotes else None
        resolved = resolve(path, config, env, git, lexical=True)
        name = path.name or str(path)
        readable = config.readable_spaces(resolved.space)
        return SessionContext(signal, resolved, readable, name, source, root=Path(os.path.normpath(path)))
    git = git_info(path)
    resolved = resolve(path, config, env, git)
    return SessionContext(
        signal=signal,
        resolved=resolved,
        readable=config.readable_spaces(resolved.space),
        workspace_name=workspace_name(path, git),
        source=source,
        root=git.toplevel if git is not None else Path(os.path.realpath(path)),
    )


@dataclass(frozen=True)
class Acting:
    """Who acts where, for a caller that is not an agent session: the web UI acting in one of the
    person's spaces (its item's own), reading what the person may read."""

    origin: Origin
    readable: tuple[str, ...]
    workspace_name: str | None = None

    @property
    def space(self) -> str:
        return self.origin.space


class Who(Protocol):
    """What a use case needs to know of its caller: a SessionContext, or an Acting."""

    @property
    def origin(self) -> Origin: ...

    @property
    def readable(self) -> tuple[str, ...]: ...

    @property
    def space(self) -> str: ...
