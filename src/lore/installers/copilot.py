"""GitHub Copilot CLI: the MCP server in `~/.copilot/mcp-config.json` (`$COPILOT_HOME`; project:
`.github/mcp.json`), and NO session-start hook.

Copilot CLI ignores whatever a sessionStart hook prints, so there is no way to put memory in front
of its first prompt. lore says so instead of installing a hook that would pretend: in Copilot CLI
the memory arrives only when the model calls `recall_facts` / `search_notes`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "copilot"
SERVER = shared.SERVER
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


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    config_path = path(scope)
    config = edits.json(config_path)
    action = shared.put_entry(shared.table(config, "mcpServers", config_path), SERVER, server_entry(lore))
    if action != "unchanged":
        edits.write_json(config_path, config)
    return [Change(config_path, action, f"MCP server {SERVER!r} → {lore} mcp (no hook: see below)")]


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    config_path = path(scope)
    config = edits.json(config_path)
    if SERVER not in config.get("mcpServers", {}):
        return shared.changes_or_nothing([], config_path, "Copilot CLI")
    del config["mcpServers"][SERVER]
    edits.write_json(config_path, config)
    return [Change(config_path, "removed", f"MCP server {SERVER!r}")]


def check(scope: Scope) -> list[Check]:
    config_path = path(scope)
    server = Edits().json(config_path).get("mcpServers", {}).get(SERVER)
    if server is None:
        return []
    where = f"copilot ({scope.label})"
    command = server.get("command") if isinstance(server, dict) else None
    return [
        shared.check_lore(command, f"{where} MCP server in {config_path}"),
        Check(
            "WARN",
            f"{where}: no memory before the first prompt (Copilot CLI ignores session-start "
            "output) → nothing to fix; the model reads memory with recall_facts",
        ),
    ]


def notes(scope: Scope) -> list[str]:
    return [NO_INJECTION]


INSTALLER = Installer(NAME, install, uninstall, check, notes)
