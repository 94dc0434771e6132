"""Cline: the MCP server in Cline's `cline_mcp_settings.json` (in VS Code's global storage; Cline
has no project-level MCP file) and a `TaskStart` hook: an executable script named after the event in
`~/Documents/Cline/Hooks/` (project: `.clinerules/hooks/`).

- The hook input names the project in `workspaceRoots`; the answer is
  `{"contextModification": ...}` (lore prints `{"cancel": false}` when it has nothing to add).
- Cline starts MCP servers in `/`, answers no `roots/list` and expands no variables in its MCP
  settings: the server cannot learn the project. User scope leaves it so (tools then resolve `/`,
  usually to `default_space`, and doctor says so); `--project` pins the (global) server to this
  project with `--workspace`, which then holds for every Cline task until you reinstall.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lore.errors import ConfigError
from lore.installers import Check, Edits, Scope, checks, shared
from lore.installers.client import Client
from lore.installers.scripts import ScriptFile
from lore.installers.servers import JsonServer

NAME = "cline"
EXTENSION = "saoudrizwan.claude-dev"
_RUN = re.compile(r"^out=\$\((.*)\)$", re.MULTILINE)


def paths(scope: Scope) -> tuple[Path, Path]:
    """(cline_mcp_settings.json, the TaskStart hook script)."""
    storage = shared.vscode_user_dir(scope.home, scope.env) / "globalStorage" / EXTENSION / "settings"
    hooks = (
        scope.project / ".clinerules" / "hooks"
        if scope.project
        else scope.home / "Documents" / "Cline" / "Hooks"
    )
    return storage / "cline_mcp_settings.json", hooks / "TaskStart"


def server_entry(lore: str, project: Path | None) -> dict[str, Any]:
    args = ["mcp", "--workspace", str(project)] if project else ["mcp"]
    return {"type": "stdio", "command": lore, "args": args, "disabled": False, "autoApprove": []}


def script(lore: str) -> str:
    return (
        "#!/bin/sh\n"
        "# lore: the project's memory at the start of each Cline task.\n"
        "# Written by `lore install cline`; `lore uninstall cline` removes it.\n"
        f"out=$({shared.hook_command(lore, NAME)})\n"
        "if [ -n \"$out\" ]; then printf '%s\\n' \"$out\"; else printf '%s\\n' '{\"cancel\": false}'; fi\n"
    )


def hook_lore(text: str) -> str | None:
    match = _RUN.search(text)
    return shared.command_lore(match.group(1)) if match else None


def _foreign_hook(scope: Scope, lore: str, edits: Edits) -> None:
    """Cline runs one script per event: one that is not lore's stays as it is."""
    hook_path = paths(scope)[1]
    existing = edits.text(hook_path)
    if existing is not None and not shared.is_ours_text(existing, NAME):
        raise ConfigError(
            f"{hook_path} is a TaskStart hook that is not lore's; Cline runs one script per event.",
            f"Add `{shared.hook_command(lore, NAME)}` to it yourself (it prints the JSON Cline reads), "
            "or move it aside and run the command again. lore changed nothing.",
        )


def _shown(seen: checks.Seen) -> bool:
    """The server is global: the user-scope check reports it, a project's only its own hook."""
    return bool(seen.hooks) or (seen.server is not None and not seen.scope.project)


def _server(seen: checks.Seen) -> list[Check]:
    if seen.server is None:
        return seen.says("WARN", f"no MCP server in {seen.server_path} → run `lore install cline`")
    out = checks.runs_lore(seen)
    args = seen.server.get("args") if isinstance(seen.server, dict) else None
    if not (isinstance(args, list) and "--workspace" in args):
        out += seen.says(
            "WARN",
            "Cline starts lore's server in / with no roots, so its tools use the space of / (usually "
            "default_space) → `lore install cline --project` in your main project pins it there",
        )
    return out


def _executable(seen: checks.Seen, found: checks.Found) -> list[Check]:
    path = paths(seen.scope)[1]
    if path.stat().st_mode & 0o111:
        return []
    return seen.says("FAIL", f"{path} is not executable, so Cline skips it → chmod +x {path}")


def notes(scope: Scope) -> list[str]:
    if scope.project:
        return [
            f"Cline's MCP settings are global: lore's tools now use {scope.project} as the workspace in "
            "every Cline task, until you run `lore install cline` (or --project elsewhere) again."
        ]
    return [
        "Cline starts MCP servers in / and gives them no project: lore's tools resolve / (usually your "
        "default_space). The memory before each task is right (the TaskStart hook names the project). "
        "To pin the tools to one project: `lore install cline --project` in it.",
        "Cline runs hooks only when they are enabled in its settings.",
    ]


MCP = JsonServer(
    lambda scope: paths(scope)[0], "mcpServers", lambda scope, lore: server_entry(lore, scope.project)
)
TASK_START = ScriptFile(
    "TaskStart hook", lambda scope: paths(scope)[1], script, hook_lore, executable=True, marked=True
)
DOCTOR = (
    _server,
    checks.each_hook(_executable, checks.hook_runs_lore),
    checks.no_hook("no TaskStart hook at {path} → run `lore install cline`"),
    checks.first_run("start a Cline task (hooks must be enabled in Cline's settings)"),
)
CLIENT = Client(NAME, "Cline", MCP, TASK_START, DOCTOR, notes, guards=(_foreign_hook,), shown=_shown)
INSTALLER = CLIENT.installer()
