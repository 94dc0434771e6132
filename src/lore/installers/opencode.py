"""OpenCode: the MCP server in `opencode.json` (`~/.config/opencode/`, project: the repository's
root), and, since OpenCode has no shell session-start hook, a small JS plugin
(`plugins/lore.js`; project: `.opencode/plugins/lore.js`) that asks `lore hook session-start
--client opencode` for the memory once per session and adds it to the system messages.

OpenCode starts a local server in the project directory (the workspace signal is the cwd) and
names its tools `lore_<tool>`.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from lore.errors import ConfigError
from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "opencode"
SERVER = shared.SERVER
_LORE_LINE = re.compile(r"^const LORE = (.*);$", re.MULTILINE)


def paths(scope: Scope) -> tuple[Path, Path]:
    """(opencode.json, lore's plugin file)."""
    if scope.project:
        return scope.project / "opencode.json", scope.project / ".opencode" / "plugins" / "lore.js"
    base = Path(scope.env.get("XDG_CONFIG_HOME") or scope.home / ".config") / "opencode"
    return base / "opencode.json", base / "plugins" / "lore.js"


def server_entry(lore: str) -> dict[str, Any]:
    return {"type": "local", "command": [lore, "mcp"], "enabled": True}


def plugin_text(lore: str) -> str:
    template = resources.files("lore.installers").joinpath("assets/opencode-plugin.js").read_text("utf-8")
    return template.replace("__LORE__", json.dumps(lore))


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    config_path, plugin_path = paths(scope)
    jsonc = config_path.with_suffix(".jsonc")
    if edits.text(config_path) is None and jsonc.exists():
        snippet = json.dumps({"mcp": {SERVER: server_entry(lore)}}, indent=2)
        raise ConfigError(
            f"Your OpenCode config is {jsonc} (JSON with comments), which lore does not rewrite.",
            f"Add this to it yourself, then run the command again to add the plugin:\n{snippet}",
        )
    config = edits.json(config_path)
    action = shared.put_entry(shared.table(config, "mcp", config_path), SERVER, server_entry(lore))
    if action != "unchanged":
        edits.write_json(config_path, config)
    changes = [Change(config_path, action, f"MCP server {SERVER!r} → {lore} mcp")]
    text = plugin_text(lore)
    before = edits.text(plugin_path)
    if before != text:
        edits.write_text(plugin_path, text)
    action = "unchanged" if before == text else ("updated" if before is not None else "added")
    changes.append(Change(plugin_path, action, "plugin: memory in the system messages at session start"))
    return changes


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    config_path, plugin_path = paths(scope)
    changes = []
    config = edits.json(config_path)
    if SERVER in config.get("mcp", {}):
        del config["mcp"][SERVER]
        edits.write_json(config_path, config)
        changes.append(Change(config_path, "removed", f"MCP server {SERVER!r}"))
    if edits.text(plugin_path) is not None:
        edits.delete(plugin_path)
        changes.append(Change(plugin_path, "removed", "plugin"))
    return shared.changes_or_nothing(changes, config_path, "OpenCode")


def check(scope: Scope) -> list[Check]:
    config_path, plugin_path = paths(scope)
    server = Edits().json(config_path).get("mcp", {}).get(SERVER)
    plugin = Edits().text(plugin_path)
    if server is None and plugin is None:
        return []
    where = f"opencode ({scope.label})"
    command = server.get("command") if isinstance(server, dict) else None
    out = [shared.check_lore(shared.command_lore(command), f"{where} MCP server in {config_path}")]
    if isinstance(server, dict) and server.get("enabled") is False:
        out.append(
            Check("WARN", f'{where}: lore\'s server is disabled in {config_path} → set "enabled": true')
        )
    if plugin is None:
        out.append(
            Check(
                "WARN",
                f"{where}: no plugin at {plugin_path}: no memory before the first answer → "
                "run `lore install opencode` again",
            )
        )
    else:
        match = _LORE_LINE.search(plugin)
        try:
            plugin_lore = json.loads(match.group(1)) if match else None
        except ValueError:
            plugin_lore = None
        out.append(shared.check_lore(plugin_lore, f"{where} plugin {plugin_path}"))
    out.append(shared.last_run(NAME, "start `opencode` in a project", scope.env))
    return out


INSTALLER = Installer(NAME, install, uninstall, check)
