"""A session's point of view: which workspace, which space (and why), what it may read, who writes.

Built once per agent session from signals the client gives (never from the model): the same
`spaces.resolve` serves the MCP server, the hook, the CLI and the HTTP server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lore.config import Config
from lore.spaces import Resolved, resolve
from lore.workspace import WorkspaceSignal, git_info, workspace_name


@dataclass(frozen=True)
class Origin:
    """Where a write comes from: the session space, the client, the workspace path."""

    space: str
    source: str
    workspace: str | None


@dataclass(frozen=True)
class SessionContext:
    signal: WorkspaceSignal
    resolved: Resolved
    readable: tuple[str, ...]
    workspace_name: str
    source: str

    @property
    def space(self) -> str:
        return self.resolved.space

    @property
    def origin(self) -> Origin:
        return Origin(self.resolved.space, self.source, str(self.signal.path))

    def describe(self) -> str:
        reads = [s for s in self.readable if s != self.space]
        also = f"; also reads {', '.join(reads)}" if reads else ""
        return (
            f"workspace {self.signal.path} (from {self.signal.source}) -> space {self.space} "
            f"({self.resolved.reason}){also}"
        )


def build(signal: WorkspaceSignal, config: Config, env: Mapping[str, str], source: str) -> SessionContext:
    """Resolve the space for a workspace signal; raises SpaceError/AmbiguousSpace with the fix."""
    path = Path(signal.path)
    git = git_info(path)
    resolved = resolve(path, config, env, git)
    return SessionContext(
        signal=signal,
        resolved=resolved,
        readable=config.readable_spaces(resolved.space),
        workspace_name=workspace_name(path, git),
        source=source,
    )
