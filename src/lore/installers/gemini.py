"""Gemini CLI: `~/.gemini/settings.json` (project: `.gemini/settings.json`) holds both the MCP
server and the SessionStart hook.

- The hook group has no `matcher`: Gemini CLI compares a SessionStart matcher with the source by
  plain equality, so `startup|clear` would never fire. lore's hook itself skips resume/compact.
- Its timeout is in milliseconds. Only the nested `hookSpecificOutput.additionalContext` reaches the
  model (inside `<hook_context>` before the first prompt); the hook's environment holds the user's
  API key, which lore never logs.
- `trust: true`: in headless runs (`gemini -p`) Gemini CLI leaves out every tool that would ask for
  confirmation, so an untrusted lore would offer no tools at all there. lore's tools only read and
  write lore's memory, in the session's own space.
"""

from __future__ import annotations

from pathlib import Path

from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "gemini"
SERVER = shared.SERVER
HOOK = "SessionStart hook (5 s)"


def path(scope: Scope) -> Path:
    return (scope.project or scope.home) / ".gemini" / "settings.json"


def server_entry(lore: str) -> dict[str, object]:
    return {"command": lore, "args": ["mcp"], "trust": True}


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    settings_path = path(scope)
    settings = edits.json(settings_path)
    servers = shared.table(settings, "mcpServers", settings_path)
    action = shared.put_entry(servers, SERVER, server_entry(lore))
    changes = [Change(settings_path, action, f"MCP server {SERVER!r} → {lore} mcp (trusted)")]
    hook = {"name": "lore", "type": "command", "command": shared.hook_command(lore, NAME), "timeout": 5000}
    hooked = shared.put_hook_group(settings, "SessionStart", {"hooks": [hook]}, NAME, settings_path)
    changes.append(Change(settings_path, "updated" if hooked else "unchanged", HOOK))
    if action != "unchanged" or hooked:
        edits.write_json(settings_path, settings)
    return changes


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    settings_path = path(scope)
    settings = edits.json(settings_path)
    changes = []
    if SERVER in settings.get("mcpServers", {}):
        del settings["mcpServers"][SERVER]
        changes.append(Change(settings_path, "removed", f"MCP server {SERVER!r}"))
    if shared.drop_hook_group(settings, "SessionStart", NAME):
        changes.append(Change(settings_path, "removed", "SessionStart hook"))
    if changes:
        edits.write_json(settings_path, settings)
    return shared.changes_or_nothing(changes, settings_path, "Gemini CLI")


def check(scope: Scope) -> list[Check]:
    settings_path = path(scope)
    settings = Edits().json(settings_path)
    server = settings.get("mcpServers", {}).get(SERVER)
    hooks = shared.our_hooks(settings, "SessionStart", NAME)
    if server is None and not hooks:
        return []
    where = f"gemini ({scope.label})"
    command = server.get("command") if isinstance(server, dict) else None
    out = [shared.check_lore(command, f"{where} MCP server in {settings_path}")]
    if isinstance(server, dict) and not server.get("trust"):
        out.append(
            Check(
                "WARN",
                f"{where}: lore's server is not trusted, so `gemini -p` offers none of its "
                "tools → run `lore install gemini` again (sets trust)",
            )
        )
    if not hooks:
        out.append(
            Check("WARN", f"{where}: no SessionStart hook in {settings_path} → run `lore install gemini`")
        )
    groups = settings.get("hooks", {}).get("SessionStart", [])
    for g, _, hook in hooks:
        matcher = groups[g].get("matcher") if isinstance(groups[g], dict) else None
        if matcher not in (None, "", "*"):
            out.append(
                Check(
                    "FAIL",
                    f"{where}: the hook's matcher {matcher!r} is compared with the session "
                    "source by equality, so it rarely fires → remove the matcher "
                    "(`lore install gemini` writes none)",
                )
            )
        out.append(shared.check_lore(shared.command_lore(hook.get("command")), f"{where} SessionStart hook"))
    out.append(shared.last_run(NAME, "start `gemini` in a project", scope.env))
    return out


INSTALLER = Installer(NAME, install, uninstall, check)
