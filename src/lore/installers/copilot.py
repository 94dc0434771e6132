"""GitHub Copilot CLI: the MCP server in `~/.copilot/mcp-config.json` (`$COPILOT_HOME`; project:
`.github/mcp.json`) and the sessionStart hook in a hook file of lore's own,
`~/.copilot/hooks/lore.json` (project: `.github/hooks/lore.json`).

- Copilot CLI starts the server in its working directory (the workspace signal is the cwd; the
  hook's input names it too, with `"source": "new"`, or "resume") and reads a project's
  `.github/mcp.json` and `.github/hooks/` only in a folder the user trusts (`trustedFolders` in its
  `config.json`, which "Yes, and remember this folder" writes; `copilot -p` needs `--trust-folder`
  otherwise): doctor checks that.
- The hook file is Copilot CLI's own format, `{"version": 1, "hooks": {"sessionStart": [{"type":
  "command", "bash", "timeoutSec"}]}}`; the hook answers a flat `{"additionalContext": ...}`, which
  arrives as a user message before the prompt (1.0.102; tests/agents/test_copilot_cli.py).
- VS Code writes its SessionStart hook into the same file (`lore install vscode`); each installer
  edits only its own entry, and the file goes when neither is left. Copilot CLI runs VS Code's entry
  too and ignores its nested answer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, checks
from lore.installers.client import Client
from lore.installers.hookfiles import Entries, Hook, HookFile, version_1
from lore.installers.servers import JsonServer

NAME = "copilot"
EVENT = "sessionStart"
TRUST = (
    'Copilot CLI reads {path} and {hooks} only in a trusted folder: answer "Yes, and remember this '
    'folder" when `copilot` first starts in {project} (`copilot -p` needs --trust-folder until then).'
)


def home(scope: Scope) -> Path:
    return Path(scope.env["COPILOT_HOME"]) if scope.env.get("COPILOT_HOME") else scope.home / ".copilot"


def path(scope: Scope) -> Path:
    if scope.project:
        return scope.project / ".github" / "mcp.json"
    return home(scope) / "mcp-config.json"


def hook_path(scope: Scope) -> Path:
    """lore's hook file (VS Code's user and project hook file too)."""
    if scope.project:
        return scope.project / ".github" / "hooks" / "lore.json"
    return home(scope) / "hooks" / "lore.json"


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
    """A project's files count only in a trusted folder (or one under it)."""
    project = seen.scope.project
    if project is None or (seen.server is None and not seen.hooks):
        return []
    folders = trusted_folders(seen.scope)
    if folders is not None and any(project.is_relative_to(f) for f in folders):
        return []
    return seen.says(
        "WARN",
        f"{project} is not a trusted folder in {home(seen.scope) / 'config.json'}, so Copilot CLI reads "
        f"neither {seen.server_path} nor {hook_path(seen.scope)} → start `copilot` there and answer "
        '"Yes, and remember this folder"',
    )


def notes(scope: Scope) -> list[str]:
    if scope.project:
        return [TRUST.format(path=path(scope), hooks=hook_path(scope), project=scope.project)]
    return []


MCP = JsonServer(path, "mcpServers", lambda scope, lore: server_entry(lore))
HOOKS = HookFile(
    hook_path,
    (Hook(EVENT),),
    installed=f"{EVENT} hook (5 s)",
    removed=f"{EVENT} hook",
    shape=Entries(own_file=True, keys=("bash", "timeoutSec")),
    prepare=version_1(NAME, "Copilot CLI", EVENT),
)
DOCTOR = (
    checks.runs_lore,
    _trusted,
    checks.no_hook(
        f"no {EVENT} hook in {{path}}: no memory before the first prompt → run `lore install copilot`"
    ),
    checks.each_hook(checks.hook_runs_lore),
    checks.first_run("start `copilot` in a project"),
)
CLIENT = Client(NAME, "Copilot CLI", MCP, HOOKS, DOCTOR, notes)
INSTALLER = CLIENT.installer()
