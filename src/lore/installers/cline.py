"""Cline, in both of its surfaces: the VS Code extension and the Cline CLI (npm `cline`, 3.x).

- The MCP server goes into each surface's `cline_mcp_settings.json`: the extension's in VS Code's
  global storage, the CLI's in `~/.cline/data/settings/` (`$CLINE_MCP_SETTINGS_PATH`,
  `$CLINE_DATA_DIR/settings/`, `$CLINE_DIR/data/settings/`); the CLI does not read the extension's.
  Neither has a project-level MCP file.
- The `TaskStart` hook is an executable script named after the event in `~/Documents/Cline/Hooks/`
  (project: `.clinerules/hooks/`), where both surfaces look. Its input names the project in
  `workspaceRoots`; the answer is `{"contextModification": ...}` (lore prints `{"cancel": false}`
  when it has nothing to add). The CLI (3.0.65, seen) runs it fire-and-forget and ignores what it
  prints, so there the memory arrives only through the tools.
- The extension starts MCP servers in `/`, answers no `roots/list` and expands no variables in its
  MCP settings: its server cannot learn the project. User scope leaves it so (tools then resolve
  `/`, usually to `default_space`, and doctor says so); `--project` pins the extension's (global)
  server to this project with `--workspace`, which then holds for every extension task until you
  reinstall. The CLI starts the server in its working directory (the project): its entry is never
  pinned, and is written at user scope only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lore.core.errors import ConfigError
from lore.installers import Change, Check, Edits, Installer, Scope, checks, shared
from lore.installers.client import Client
from lore.installers.scripts import ScriptFile
from lore.installers.servers import JsonServer

NAME = "cline"
EXTENSION = "saoudrizwan.claude-dev"
SETTINGS = "cline_mcp_settings.json"
_RUN = re.compile(r"^out=\$\((.*)\)$", re.MULTILINE)


def paths(scope: Scope) -> tuple[Path, Path]:
    """(the extension's cline_mcp_settings.json, the TaskStart hook script)."""
    storage = shared.vscode_user_dir(scope.home, scope.env) / "globalStorage" / EXTENSION / "settings"
    hooks = (
        scope.project / ".clinerules" / "hooks"
        if scope.project
        else scope.home / "Documents" / "Cline" / "Hooks"
    )
    return storage / SETTINGS, hooks / "TaskStart"


def cli_path(scope: Scope) -> Path:
    """The Cline CLI's cline_mcp_settings.json, resolved as the CLI resolves it."""
    env = scope.env
    if env.get("CLINE_MCP_SETTINGS_PATH", "").strip():
        return Path(env["CLINE_MCP_SETTINGS_PATH"].strip())
    data = env.get("CLINE_DATA_DIR", "").strip()
    if not data:
        data = str(Path(env.get("CLINE_DIR", "").strip() or scope.home / ".cline") / "data")
    return Path(data) / "settings" / SETTINGS


# Seconds Cline waits for the server: with no `timeout` the CLI (3.0.65) gives `initialize` only 3 s,
# which a `lore mcp` start on a loaded machine can miss (seen under parallel tests); with one, the
# CLI uses it for the connection and for each call (its default for calls is 60 s, as here).
TIMEOUT = 60


def server_entry(lore: str, project: Path | None) -> dict[str, Any]:
    args = ["mcp", "--workspace", str(project)] if project else ["mcp"]
    return {
        "type": "stdio",
        "command": lore,
        "args": args,
        "timeout": TIMEOUT,
        "disabled": False,
        "autoApprove": [],
    }


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
    """The servers are global: the user-scope check reports them, a project's only its own hook."""
    return bool(seen.hooks) or (seen.server is not None and not seen.scope.project)


def _server(seen: checks.Seen) -> list[Check]:
    if seen.server is None:
        return seen.says("WARN", f"no MCP server in {seen.server_path} → run `lore install cline`")
    out = checks.runs_lore(seen)
    args = seen.server.get("args") if isinstance(seen.server, dict) else None
    if not (isinstance(args, list) and "--workspace" in args):
        out += seen.says(
            "WARN",
            "the VS Code extension starts lore's server in / with no roots, so its tools use the "
            "space of / (usually default_space) → `lore install cline --project` in your main project "
            "pins it there (the Cline CLI starts it in the project)",
        )
    return out


def _executable(seen: checks.Seen, found: checks.Found) -> list[Check]:
    path = paths(seen.scope)[1]
    if path.stat().st_mode & 0o111:
        return []
    return seen.says("FAIL", f"{path} is not executable, so Cline skips it → chmod +x {path}")


def notes(scope: Scope) -> list[str]:
    cli = (
        "The Cline CLI (3.x) runs the TaskStart hook but ignores what it prints: in the CLI the memory "
        "arrives only when the model calls recall_facts or search_notes."
    )
    if scope.project:
        return [
            "Cline's MCP settings are global: lore's tools in the VS Code extension now use "
            f"{scope.project} as the workspace in every task, until you run `lore install cline` (or "
            "--project elsewhere) again. The Cline CLI's server comes from `lore install cline` (user "
            "scope) and starts in the project.",
            cli,
        ]
    return [
        "The VS Code extension starts MCP servers in / and gives them no project: lore's tools resolve "
        "/ (usually your default_space); the memory before each task is right (the TaskStart hook "
        "names the project). To pin the extension's tools to one project: `lore install cline "
        "--project` in it. The Cline CLI starts the server in the project.",
        "The VS Code extension runs hooks only when they are enabled in its settings.",
        cli,
    ]


MCP = JsonServer(
    lambda scope: paths(scope)[0],
    "mcpServers",
    lambda scope, lore: server_entry(lore, scope.project),
    " (VS Code extension)",
)
#: The CLI's entry: user scope only, never pinned (the CLI starts the server in the project).
CLI_MCP = JsonServer(cli_path, "mcpServers", lambda scope, lore: server_entry(lore, None), " (Cline CLI)")
TASK_START = ScriptFile(
    "TaskStart hook", lambda scope: paths(scope)[1], script, hook_lore, executable=True, marked=True
)
DOCTOR = (
    _server,
    checks.each_hook(_executable, checks.hook_runs_lore),
    checks.no_hook("no TaskStart hook at {path} → run `lore install cline`"),
    checks.first_run("start a Cline task (the extension runs hooks only when they are enabled)"),
)
CLIENT = Client(NAME, "Cline", MCP, TASK_START, DOCTOR, notes, guards=(_foreign_hook,), shown=_shown)


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    changes = CLIENT.install(scope, lore, edits)
    if scope.project:
        return changes
    return [changes[0], CLI_MCP.install(scope, lore, edits), *changes[1:]]


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    changes = CLIENT.uninstall(scope, edits)
    cli = None if scope.project else CLI_MCP.uninstall(scope, edits)
    if cli is None:
        return changes
    return [c for c in changes if c.action != "unchanged"] + [cli]


def check(scope: Scope) -> list[Check]:
    """The extension's checks, with the CLI's server (user scope) after the extension's."""
    out = CLIENT.check(scope)
    if scope.project:
        return out
    path, entry = cli_path(scope), CLI_MCP.read(scope)
    if entry is not None:
        cli = [shared.check_lore(CLI_MCP.lore(entry), f"cline (user) Cline CLI MCP server in {path}")]
    elif out:  # installed for the extension only (before lore knew the CLI): say what the CLI lacks
        cli = [
            Check("WARN", f"cline (user): no MCP server in {path} for the Cline CLI → `lore install cline`")
        ]
    else:
        cli = []
    return out[:1] + cli + out[1:]


INSTALLER = Installer(NAME, install, uninstall, check, notes)
