"""Cursor: `~/.cursor/mcp.json` and `~/.cursor/hooks.json` (project: `.cursor/...`).

- Cursor starts a stdio server in `/` or `$HOME` and answers no `roots/list`, so the server gets
  `--workspace ${workspaceFolder}` (Cursor expands it); `WORKSPACE_FOLDER_PATHS` is the fallback.
- The hook file is Cursor's own format: `{"version": 1, "hooks": {"sessionStart": [{"command",
  "timeout"}]}}`; its input names the project in `workspace_roots`, and it answers
  `{"additional_context": ...}`. Cursor documents sessionStart as fire-and-forget: the memory may
  land after the first prompt, so the tools (`recall_facts`) stay the reliable path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lore.errors import ConfigError
from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "cursor"
SERVER = shared.SERVER
EVENT = "sessionStart"
HOOK = "sessionStart hook (5 s)"


def paths(scope: Scope) -> tuple[Path, Path]:
    base = (scope.project or scope.home) / ".cursor"
    return base / "mcp.json", base / "hooks.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"command": lore, "args": ["mcp", "--workspace", "${workspaceFolder}"]}


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    mcp_path, hooks_path = paths(scope)
    config = edits.json(mcp_path)
    action = shared.put_entry(shared.table(config, "mcpServers", mcp_path), SERVER, server_entry(lore))
    if action != "unchanged":
        edits.write_json(mcp_path, config)
    changes = [
        Change(mcp_path, action, f"MCP server {SERVER!r} → {lore} mcp --workspace ${{workspaceFolder}}")
    ]

    hooks = edits.json(hooks_path)
    if hooks.get("version", 1) != 1:
        raise ConfigError(
            f"{hooks_path} has version {hooks.get('version')!r}; lore writes Cursor's hooks version 1.",
            f"Add `{shared.hook_command(lore, NAME)}` to its {EVENT} hooks yourself; lore changed nothing.",
        )
    before = json.dumps(hooks, sort_keys=True)
    hooks.setdefault("version", 1)
    events = shared.table(hooks, "hooks", hooks_path)
    ours = {"command": shared.hook_command(lore, NAME), "timeout": 5}
    events[EVENT] = [*_without_ours(events.get(EVENT, [])), ours]
    changed = json.dumps(hooks, sort_keys=True) != before
    if changed:
        edits.write_json(hooks_path, hooks)
    changes.append(Change(hooks_path, "updated" if changed else "unchanged", HOOK))
    return changes


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    mcp_path, hooks_path = paths(scope)
    changes = []
    config = edits.json(mcp_path)
    if SERVER in config.get("mcpServers", {}):
        del config["mcpServers"][SERVER]
        edits.write_json(mcp_path, config)
        changes.append(Change(mcp_path, "removed", f"MCP server {SERVER!r}"))
    hooks = edits.json(hooks_path)
    events = hooks.get("hooks")
    if isinstance(events, dict) and isinstance(events.get(EVENT), list):
        kept = _without_ours(events[EVENT])
        if kept != events[EVENT]:
            if kept:
                events[EVENT] = kept
            else:
                del events[EVENT]
            edits.write_json(hooks_path, hooks)
            changes.append(Change(hooks_path, "removed", f"{EVENT} hook"))
    return shared.changes_or_nothing(changes, mcp_path, "Cursor")


def _without_ours(entries: Any) -> list[Any]:
    items = entries if isinstance(entries, list) else []
    return [e for e in items if not (isinstance(e, dict) and shared.is_ours(e.get("command"), NAME))]


def _ours(hooks: dict[str, Any]) -> list[dict[str, Any]]:
    events = hooks.get("hooks")
    entries = events.get(EVENT) if isinstance(events, dict) else None
    items = entries if isinstance(entries, list) else []
    return [e for e in items if isinstance(e, dict) and shared.is_ours(e.get("command"), NAME)]


def check(scope: Scope) -> list[Check]:
    mcp_path, hooks_path = paths(scope)
    server = Edits().json(mcp_path).get("mcpServers", {}).get(SERVER)
    hooks_file = Edits().json(hooks_path)
    ours = _ours(hooks_file)
    if server is None and not ours:
        return []
    where = f"cursor ({scope.label})"
    command = server.get("command") if isinstance(server, dict) else None
    out = [shared.check_lore(command, f"{where} MCP server in {mcp_path}")]
    args = server.get("args") if isinstance(server, dict) else None
    if isinstance(server, dict) and not (isinstance(args, list) and "--workspace" in args):
        out.append(
            Check(
                "WARN",
                f"{where}: lore's server has no --workspace, and Cursor starts it in / with "
                "no roots → run `lore install cursor` again",
            )
        )
    if not ours:
        out.append(
            Check("WARN", f"{where}: no sessionStart hook in {hooks_path} → run `lore install cursor`")
        )
    elif hooks_file.get("version") != 1:
        out.append(
            Check(
                "FAIL",
                f'{where}: {hooks_path} lacks `"version": 1`, so Cursor ignores it → '
                "run `lore install cursor` again",
            )
        )
    for hook in ours:
        out.append(shared.check_lore(shared.command_lore(hook.get("command")), f"{where} sessionStart hook"))
    out.append(shared.last_run(NAME, "open a project in Cursor and start an agent chat", scope.env))
    return out


def notes(scope: Scope) -> list[str]:
    return [
        "Cursor runs sessionStart hooks fire-and-forget: the memory may arrive after the first prompt. "
        "lore's tools (recall_facts) are the reliable path in Cursor."
    ]


INSTALLER = Installer(NAME, install, uninstall, check, notes)
