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
from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "cline"
SERVER = shared.SERVER
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


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    settings_path, hook_path = paths(scope)
    existing = edits.text(hook_path)
    if existing is not None and not shared.is_ours_text(existing, NAME):
        raise ConfigError(
            f"{hook_path} is a TaskStart hook that is not lore's; Cline runs one script per event.",
            f"Add `{shared.hook_command(lore, NAME)}` to it yourself (it prints the JSON Cline reads), "
            "or move it aside and run the command again. lore changed nothing.",
        )
    settings = edits.json(settings_path)
    entry = server_entry(lore, scope.project)
    action = shared.put_entry(shared.table(settings, "mcpServers", settings_path), SERVER, entry)
    if action != "unchanged":
        edits.write_json(settings_path, settings)
    pinned = f" --workspace {scope.project}" if scope.project else ""
    changes = [Change(settings_path, action, f"MCP server {SERVER!r} → {lore} mcp{pinned}")]
    text = script(lore)
    if existing != text:
        edits.write_text(hook_path, text, executable=True)
    action = "unchanged" if existing == text else ("updated" if existing is not None else "added")
    changes.append(Change(hook_path, action, "TaskStart hook"))
    return changes


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    settings_path, hook_path = paths(scope)
    changes = []
    settings = edits.json(settings_path)
    if SERVER in settings.get("mcpServers", {}):
        del settings["mcpServers"][SERVER]
        edits.write_json(settings_path, settings)
        changes.append(Change(settings_path, "removed", f"MCP server {SERVER!r}"))
    existing = edits.text(hook_path)
    if existing is not None and shared.is_ours_text(existing, NAME):
        edits.delete(hook_path)
        changes.append(Change(hook_path, "removed", "TaskStart hook"))
    return shared.changes_or_nothing(changes, settings_path, "Cline")


def hook_lore(text: str) -> str | None:
    match = _RUN.search(text)
    return shared.command_lore(match.group(1)) if match else None


def check(scope: Scope) -> list[Check]:
    settings_path, hook_path = paths(scope)
    server = Edits().json(settings_path).get("mcpServers", {}).get(SERVER)
    hook = Edits().text(hook_path)
    ours = hook is not None and shared.is_ours_text(hook, NAME)
    if scope.project and not ours:
        return []  # the server is global: the user-scope check reports it
    if server is None and not ours:
        return []
    where = f"cline ({scope.label})"
    out: list[Check] = []
    if server is None:
        out.append(Check("WARN", f"{where}: no MCP server in {settings_path} → run `lore install cline`"))
    else:
        command = server.get("command") if isinstance(server, dict) else None
        out.append(shared.check_lore(command, f"{where} MCP server in {settings_path}"))
        args = server.get("args") if isinstance(server, dict) else None
        if not (isinstance(args, list) and "--workspace" in args):
            out.append(
                Check(
                    "WARN",
                    f"{where}: Cline starts lore's server in / with no roots, so its tools use "
                    "the space of / (usually default_space) → `lore install cline --project` "
                    "in your main project pins it there",
                )
            )
    if ours and hook is not None:
        if not hook_path.stat().st_mode & 0o111:
            out.append(
                Check(
                    "FAIL",
                    f"{where}: {hook_path} is not executable, so Cline skips it → chmod +x {hook_path}",
                )
            )
        out.append(shared.check_lore(hook_lore(hook), f"{where} TaskStart hook {hook_path}"))
    elif not scope.project:
        out.append(Check("WARN", f"{where}: no TaskStart hook at {hook_path} → run `lore install cline`"))
    out.append(
        shared.last_run(NAME, "start a Cline task (hooks must be enabled in Cline's settings)", scope.env)
    )
    return out


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


INSTALLER = Installer(NAME, install, uninstall, check, notes)
