"""VS Code (Copilot agent mode): the MCP server in the user's `Code/User/mcp.json` (project:
`.vscode/mcp.json`), under `servers`, and the SessionStart hook in a hook file of lore's own:
`~/.copilot/hooks/lore.json` (project: `.github/hooks/lore.json`).

- `--workspace ${workspaceFolder}`: VS Code expands it; it also answers `roots/list` and starts the
  server in the workspace folder, so any of the three signals gives the project.
- The hook answers with the nested `hookSpecificOutput.additionalContext`. VS Code's SessionStart
  fires on the first prompt of a new session (its `source` is "new").
- Copilot CLI reads the same hook folders and runs this hook too, but ignores its nested answer (a
  process start, nothing else). `lore install copilot` puts Copilot CLI's own sessionStart entry
  in the same file; each installer edits only its own entry.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, checks, shared
from lore.installers.client import Client
from lore.installers.hookfiles import Entries, Hook, HookFile
from lore.installers.servers import JsonServer

NAME = "vscode"


def paths(scope: Scope) -> tuple[Path, Path]:
    """(mcp.json, lore's hook file)."""
    if scope.project:
        return scope.project / ".vscode" / "mcp.json", scope.project / ".github" / "hooks" / "lore.json"
    hooks_dir = Path(scope.env["COPILOT_HOME"]) if scope.env.get("COPILOT_HOME") else scope.home / ".copilot"
    return shared.vscode_user_dir(scope.home, scope.env) / "mcp.json", hooks_dir / "hooks" / "lore.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"type": "stdio", "command": lore, "args": ["mcp", "--workspace", "${workspaceFolder}"]}


def _typed(seen: checks.Seen, found: checks.Found) -> list[Check]:
    if found.hook.get("type") == "command":
        return []
    text = f'the hook in {seen.hook_path} lacks "type": "command" → run `lore install vscode` again'
    return seen.says("FAIL", text)


MCP = JsonServer(lambda scope: paths(scope)[0], "servers", lambda scope, lore: server_entry(lore))
HOOKS = HookFile(
    lambda scope: paths(scope)[1],
    (Hook("SessionStart"),),
    installed="SessionStart hook (5 s)",
    removed="SessionStart hook",
    shape=Entries(own_file=True),
    same=operator.eq,  # lore's hook already there in value (a timeout of 5.0 is 5): left as it is
)
DOCTOR = (
    checks.runs_lore,
    checks.no_hook("no SessionStart hook in {path} → run `lore install vscode`"),
    checks.each_hook(_typed, checks.hook_runs_lore),
    checks.first_run(
        "start an agent session in VS Code (hooks are in preview: enable them in settings if your "
        "VS Code asks)"
    ),
)
CLIENT = Client(NAME, "VS Code", MCP, HOOKS, DOCTOR)
INSTALLER = CLIENT.installer()
