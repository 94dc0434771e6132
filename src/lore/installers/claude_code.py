"""Claude Code, user scope: the MCP server in `~/.claude.json` (what `claude mcp add --scope user`
writes) and the SessionStart hook in `~/.claude/settings.json`. Both call lore by absolute path, so
neither depends on PATH nor on a shim. (The plugin in the repo's `plugin/` is the alternative for
marketplace users; use one or the other, not both, or memory arrives twice.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Change, Installer, jsonfile

SERVER = "lore"
MATCHER = "startup|clear"
_MARK = "hook session-start --client claude-code"


def _hook_command(lore: str) -> str:
    return f"{lore} {_MARK}"


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and isinstance(hook.get("command"), str) and _MARK in hook["command"]


def install(home: Path, lore: str) -> list[Change]:
    changes = []
    mcp_path = home / ".claude.json"
    config = jsonfile.load(mcp_path)
    servers = config.setdefault("mcpServers", {})
    entry = {"type": "stdio", "command": lore, "args": ["mcp"], "env": {}}
    action = "unchanged" if servers.get(SERVER) == entry else ("updated" if SERVER in servers else "added")
    if action != "unchanged":
        servers[SERVER] = entry
        jsonfile.save(mcp_path, config)
    changes.append(Change(mcp_path, action, f"MCP server {SERVER!r} → {lore} mcp"))

    settings_path = home / ".claude" / "settings.json"
    settings = jsonfile.load(settings_path)
    before = repr(settings)
    groups = _without_ours(settings.setdefault("hooks", {}).get("SessionStart", []))
    hook = {"type": "command", "command": _hook_command(lore), "timeout": 5}
    groups.append({"matcher": MATCHER, "hooks": [hook]})
    settings["hooks"]["SessionStart"] = groups
    if repr(settings) != before:
        jsonfile.save(settings_path, settings)
        changes.append(Change(settings_path, "updated", "SessionStart hook (startup|clear, 5 s)"))
    else:
        changes.append(Change(settings_path, "unchanged", "SessionStart hook (startup|clear, 5 s)"))
    return changes


def uninstall(home: Path) -> list[Change]:
    changes = []
    mcp_path = home / ".claude.json"
    config = jsonfile.load(mcp_path)
    if SERVER in config.get("mcpServers", {}):
        del config["mcpServers"][SERVER]
        jsonfile.save(mcp_path, config)
        changes.append(Change(mcp_path, "removed", f"MCP server {SERVER!r}"))
    settings_path = home / ".claude" / "settings.json"
    settings = jsonfile.load(settings_path)
    hooks = settings.get("hooks", {})
    groups = hooks.get("SessionStart", [])
    kept = _without_ours(groups)
    if kept != groups:
        if kept:
            hooks["SessionStart"] = kept
        else:
            del hooks["SessionStart"]
        if not hooks:
            settings.pop("hooks")
        jsonfile.save(settings_path, settings)
        changes.append(Change(settings_path, "removed", "SessionStart hook"))
    return changes or [Change(mcp_path, "unchanged", "lore was not installed for Claude Code")]


def _without_ours(groups: Any) -> list[Any]:
    """The user's SessionStart groups with lore's hook taken out (empty groups dropped)."""
    kept = []
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, dict):
            kept.append(group)
            continue
        hooks = [h for h in group.get("hooks", []) if not _is_ours(h)]
        if hooks:
            kept.append({**group, "hooks": hooks})
        elif not any(_is_ours(h) for h in group.get("hooks", [])):
            kept.append(group)
    return kept


INSTALLER = Installer("claude-code", install, uninstall)
