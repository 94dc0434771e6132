"""OpenCode: the MCP server in `opencode.json` (`~/.config/opencode/`, project: the repository's
root), and, since OpenCode has no shell session-start hook, a small JS plugin
(`plugins/lore.js`; project: `.opencode/plugins/lore.js`) that asks `lore hook session-start
--client opencode` for the memory once per session and adds it to the system messages; when a
session goes idle (`session.idle`) it runs `lore hook session-end --client opencode` detached, with
the last text the agent completed (`experimental.text.complete`): the handoff.

OpenCode starts a local server in the project directory (the workspace signal is the cwd) and
names its tools `lore_<tool>`.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from lore.core.errors import ConfigError
from lore.installers import Edits, Scope, checks
from lore.installers.client import Client
from lore.installers.scripts import ScriptFile
from lore.installers.servers import SERVER, JsonServer

NAME = "opencode"
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


def plugin_lore(text: str) -> Any:
    """What a plugin file names as lore's executable (None: nothing readable)."""
    match = _LORE_LINE.search(text)
    try:
        return json.loads(match.group(1)) if match else None
    except ValueError:
        return None


def _jsonc(scope: Scope, lore: str, edits: Edits) -> None:
    """A config with comments (`opencode.jsonc`) is the user's to edit."""
    config_path = paths(scope)[0]
    jsonc = config_path.with_suffix(".jsonc")
    if edits.text(config_path) is None and jsonc.exists():
        snippet = json.dumps({"mcp": {SERVER: server_entry(lore)}}, indent=2)
        raise ConfigError(
            f"Your OpenCode config is {jsonc} (JSON with comments), which lore does not rewrite.",
            f"Add this to it yourself, then run the command again to add the plugin:\n{snippet}",
        )


MCP = JsonServer(lambda scope: paths(scope)[0], "mcp", lambda scope, lore: server_entry(lore), argv=True)
PLUGIN = ScriptFile(
    "plugin",
    lambda scope: paths(scope)[1],
    plugin_text,
    plugin_lore,
    installed="plugin: memory in the system messages at session start, a handoff when a session goes idle",
)
DOCTOR = (
    checks.runs_lore,
    checks.server_if(
        lambda server: isinstance(server, dict) and server.get("enabled") is False,
        "WARN",
        'lore\'s server is disabled in {path} → set "enabled": true',
    ),
    checks.no_hook(
        "no plugin at {path}: no memory before the first answer → run `lore install opencode` again"
    ),
    checks.each_hook(checks.hook_runs_lore),
    checks.first_run("start `opencode` in a project"),
    checks.end_run("let an `opencode` session in a project answer once"),
)
CLIENT = Client(NAME, "OpenCode", MCP, PLUGIN, DOCTOR, guards=(_jsonc,))
INSTALLER = CLIENT.installer()
