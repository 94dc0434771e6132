"""GitHub Copilot CLI: the MCP server in `~/.copilot/mcp-config.json` (`$COPILOT_HOME`; project:
`.github/mcp.json`), and NO session-start hook.

Copilot CLI ignores whatever a sessionStart hook prints, so there is no way to put memory in front
of its first prompt. lore says so instead of installing a hook that would pretend: in Copilot CLI
the memory arrives only when the model calls `recall_facts` / `search_notes`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, checks
from lore.installers.client import Client
from lore.installers.servers import JsonServer

NAME = "copilot"
NO_INJECTION = (
    "Copilot CLI has no pre-prompt injection (it ignores session-start hook output), so lore installs "
    "no hook for it: memory reaches Copilot only when the model calls recall_facts or search_notes."
)


def path(scope: Scope) -> Path:
    if scope.project:
        return scope.project / ".github" / "mcp.json"
    base = Path(scope.env["COPILOT_HOME"]) if scope.env.get("COPILOT_HOME") else scope.home / ".copilot"
    return base / "mcp-config.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"type": "local", "command": lore, "args": ["mcp"], "tools": ["*"]}


def _no_memory(seen: checks.Seen) -> list[Check]:
    return seen.says(
        "WARN",
        "no memory before the first prompt (Copilot CLI ignores session-start output) → nothing to "
        "fix; the model reads memory with recall_facts",
    )


def notes(scope: Scope) -> list[str]:
    return [NO_INJECTION]


MCP = JsonServer(path, "mcpServers", lambda scope, lore: server_entry(lore), " (no hook: see below)")
CLIENT = Client(NAME, "Copilot CLI", MCP, None, (checks.runs_lore, _no_memory), notes)
INSTALLER = CLIENT.installer()
