"""VS Code (Copilot agent mode): the MCP server in the user's `Code/User/mcp.json` (project:
`.vscode/mcp.json`), under `servers`, and the SessionStart hook in a hook file of lore's own:
`~/.copilot/hooks/lore.json` (project: `.github/hooks/lore.json`).

- `--workspace ${workspaceFolder}`: VS Code expands it; it also answers `roots/list` and starts the
  server in the workspace folder, so any of the three signals gives the project.
- The hook answers with the nested `hookSpecificOutput.additionalContext`. VS Code's SessionStart
  fires on the first prompt of a new session (its `source` is "new").
- Copilot CLI reads the same hook folders; it ignores session-start output, so the hook costs it a
  process start and nothing else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "vscode"
SERVER = shared.SERVER
HOOK = "SessionStart hook (5 s)"


def paths(scope: Scope) -> tuple[Path, Path]:
    """(mcp.json, lore's hook file)."""
    if scope.project:
        return scope.project / ".vscode" / "mcp.json", scope.project / ".github" / "hooks" / "lore.json"
    hooks_dir = Path(scope.env["COPILOT_HOME"]) if scope.env.get("COPILOT_HOME") else scope.home / ".copilot"
    return shared.vscode_user_dir(scope.home, scope.env) / "mcp.json", hooks_dir / "hooks" / "lore.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"type": "stdio", "command": lore, "args": ["mcp", "--workspace", "${workspaceFolder}"]}


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    mcp_path, hooks_path = paths(scope)
    config = edits.json(mcp_path)
    action = shared.put_entry(shared.table(config, "servers", mcp_path), SERVER, server_entry(lore))
    if action != "unchanged":
        edits.write_json(mcp_path, config)
    changes = [
        Change(mcp_path, action, f"MCP server {SERVER!r} → {lore} mcp --workspace ${{workspaceFolder}}")
    ]

    hooks = edits.json(hooks_path)
    events = shared.table(hooks, "hooks", hooks_path)
    ours = {"type": "command", "command": shared.hook_command(lore, NAME), "timeout": 5}
    wanted = [*_without_ours(events.get("SessionStart", [])), ours]
    if events.get("SessionStart") == wanted:
        changes.append(Change(hooks_path, "unchanged", HOOK))
    else:
        events["SessionStart"] = wanted
        edits.write_json(hooks_path, hooks)
        changes.append(Change(hooks_path, "updated", HOOK))
    return changes


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    mcp_path, hooks_path = paths(scope)
    changes = []
    config = edits.json(mcp_path)
    if SERVER in config.get("servers", {}):
        del config["servers"][SERVER]
        edits.write_json(mcp_path, config)
        changes.append(Change(mcp_path, "removed", f"MCP server {SERVER!r}"))
    hooks = edits.json(hooks_path)
    events = hooks.get("hooks")
    if isinstance(events, dict) and _ours(hooks):
        kept = _without_ours(events.get("SessionStart"))
        if kept:
            events["SessionStart"] = kept
        else:
            del events["SessionStart"]
        if not events and set(hooks) == {"hooks"}:
            edits.delete(hooks_path)  # lore's own file, now empty
        else:
            edits.write_json(hooks_path, hooks)
        changes.append(Change(hooks_path, "removed", "SessionStart hook"))
    return shared.changes_or_nothing(changes, mcp_path, "VS Code")


def _without_ours(entries: Any) -> list[Any]:
    items = entries if isinstance(entries, list) else []
    return [e for e in items if not (isinstance(e, dict) and shared.is_ours(e.get("command"), NAME))]


def _ours(hooks: dict[str, Any]) -> list[dict[str, Any]]:
    events = hooks.get("hooks")
    entries = events.get("SessionStart") if isinstance(events, dict) else None
    items = entries if isinstance(entries, list) else []
    return [e for e in items if isinstance(e, dict) and shared.is_ours(e.get("command"), NAME)]


def check(scope: Scope) -> list[Check]:
    mcp_path, hooks_path = paths(scope)
    server = Edits().json(mcp_path).get("servers", {}).get(SERVER)
    ours = _ours(Edits().json(hooks_path))
    if server is None and not ours:
        return []
    where = f"vscode ({scope.label})"
    command = server.get("command") if isinstance(server, dict) else None
    out = [shared.check_lore(command, f"{where} MCP server in {mcp_path}")]
    if not ours:
        out.append(
            Check("WARN", f"{where}: no SessionStart hook in {hooks_path} → run `lore install vscode`")
        )
    for hook in ours:
        if hook.get("type") != "command":
            out.append(
                Check(
                    "FAIL",
                    f'{where}: the hook in {hooks_path} lacks "type": "command" → run '
                    "`lore install vscode` again",
                )
            )
        out.append(shared.check_lore(shared.command_lore(hook.get("command")), f"{where} SessionStart hook"))
    out.append(
        shared.last_run(
            NAME,
            "start an agent session in VS Code (hooks are in preview: enable "
            "them in settings if your VS Code asks)",
            scope.env,
        )
    )
    return out


INSTALLER = Installer(NAME, install, uninstall, check)
