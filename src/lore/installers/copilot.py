"""GitHub Copilot CLI: the MCP server in `~/.copilot/mcp-config.json` (`$COPILOT_HOME`; project:
`.github/mcp.json`), and NO session-start hook.

Copilot CLI starts the server in its working directory (the workspace signal is the cwd) and reads
a project's `.github/mcp.json` only in a folder the user trusts (`trustedFolders` in its
`config.json`, which "Yes, and remember this folder" writes; `copilot -p` needs `--trust-folder`
otherwise): doctor checks that.

lore's hook adapter (`lore.clients`) treats Copilot CLI as ignoring whatever a sessionStart hook
prints, so lore installs no hook: in Copilot CLI the memory arrives only when the model calls
`recall_facts` / `search_notes`. Copilot CLI 1.0.102 does read a flat `{"additionalContext": ...}`
from a sessionStart hook (`~/.copilot/hooks/*.json`; tests/agents/test_copilot_cli.py pins it):
a hook here waits for that adapter to answer in that shape.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, checks
from lore.installers.client import Client
from lore.installers.servers import JsonServer

NAME = "copilot"
NO_INJECTION = (
    "lore has no pre-prompt injection for Copilot CLI (its hook adapter sends Copilot nothing), so lore "
    "installs no hook for it: memory reaches Copilot only when the model calls recall_facts or "
    "search_notes."
)
TRUST = (
    'Copilot CLI reads {path} only in a trusted folder: answer "Yes, and remember this folder" when '
    "`copilot` first starts in {project} (`copilot -p` needs --trust-folder until then)."
)


def home(scope: Scope) -> Path:
    return Path(scope.env["COPILOT_HOME"]) if scope.env.get("COPILOT_HOME") else scope.home / ".copilot"


def path(scope: Scope) -> Path:
    if scope.project:
        return scope.project / ".github" / "mcp.json"
    return home(scope) / "mcp-config.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"type": "local", "command": lore, "args": ["mcp"], "tools": ["*"]}


def trusted_folders(scope: Scope) -> list[Path] | None:
    """The folders Copilot CLI trusts (`trustedFolders` in config.json, which starts with `//`
    comment lines, and in settings.json); None when a file cannot be read."""
    found: list[Path] = []
    for name in ("config.json", "settings.json"):
        try:
            text = (home(scope) / name).read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except (OSError, UnicodeDecodeError):
            return None
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
        try:
            data = json.loads(body) if body.strip() else {}
        except ValueError:
            return None
        folders = data.get("trustedFolders") if isinstance(data, dict) else None
        found += [Path(os.path.abspath(f)) for f in folders or [] if isinstance(f, str)]
    return found


def _trusted(seen: checks.Seen) -> list[Check]:
    """A project's file counts only in a trusted folder (or one under it)."""
    project = seen.scope.project
    if project is None or seen.server is None:
        return []
    folders = trusted_folders(seen.scope)
    if folders is not None and any(project.is_relative_to(f) for f in folders):
        return []
    return seen.says(
        "WARN",
        f"{project} is not a trusted folder in {home(seen.scope) / 'config.json'}, so Copilot CLI does "
        f'not read {seen.server_path} → start `copilot` there and answer "Yes, and remember this folder"',
    )


def _no_memory(seen: checks.Seen) -> list[Check]:
    return seen.says(
        "WARN",
        "no memory before the first prompt (lore installs no sessionStart hook for Copilot CLI) → "
        "nothing to fix; the model reads memory with recall_facts",
    )


def notes(scope: Scope) -> list[str]:
    if scope.project:
        return [TRUST.format(path=path(scope), project=scope.project), NO_INJECTION]
    return [NO_INJECTION]


MCP = JsonServer(path, "mcpServers", lambda scope, lore: server_entry(lore), " (no hook: see below)")
CLIENT = Client(NAME, "Copilot CLI", MCP, None, (checks.runs_lore, _trusted, _no_memory), notes)
INSTALLER = CLIENT.installer()
