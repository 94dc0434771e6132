"""Cursor: `~/.cursor/mcp.json` and `~/.cursor/hooks.json` (project: `.cursor/...`).

- Cursor starts a stdio server in `/` or `$HOME` and answers no `roots/list`, so the server gets
  `--workspace ${workspaceFolder}` (Cursor expands it); `WORKSPACE_FOLDER_PATHS` is the fallback.
- The hook file is Cursor's own format: `{"version": 1, "hooks": {"sessionStart": [{"command",
  "timeout"}]}}`; its input names the project in `workspace_roots`, and it answers
  `{"additional_context": ...}`. Cursor documents sessionStart as fire-and-forget: the memory may
  land after the first prompt, so the tools (`recall_facts`) stay the reliable path.
- The handoff (`lore hook session-end`) hangs on `afterAgentResponse`, whose documented input carries
  the agent's reply as `text` (Cursor does not run here: golden files and the documented input).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Check, Edits, Scope, checks
from lore.installers.client import Client
from lore.installers.hookfiles import Entries, Hook, HookFile, version_1
from lore.installers.servers import JsonServer

NAME = "cursor"
EVENT = "sessionStart"
END_EVENT = "afterAgentResponse"


def paths(scope: Scope) -> tuple[Path, Path]:
    base = (scope.project or scope.home) / ".cursor"
    return base / "mcp.json", base / "hooks.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"command": lore, "args": ["mcp", "--workspace", "${workspaceFolder}"]}


def _no_workspace(server: Any) -> bool:
    args = server.get("args") if isinstance(server, dict) else None
    return isinstance(server, dict) and not (isinstance(args, list) and "--workspace" in args)


def _versionless(seen: checks.Seen) -> list[Check]:
    if not seen.hooks or Edits().json(paths(seen.scope)[1]).get("version") == 1:
        return []
    return seen.says(
        "FAIL",
        f'{seen.hook_path} lacks `"version": 1`, so Cursor ignores it → run `lore install cursor` again',
    )


def notes(scope: Scope) -> list[str]:
    return [
        "Cursor runs sessionStart hooks fire-and-forget: the memory may arrive after the first prompt. "
        "lore's tools (recall_facts) are the reliable path in Cursor."
    ]


MCP = JsonServer(lambda scope: paths(scope)[0], "mcpServers", lambda scope, lore: server_entry(lore))
HOOKS = HookFile(
    lambda scope: paths(scope)[1],
    (
        Hook(EVENT, {}),
        # The handoff: Cursor's documented `afterAgentResponse` carries the agent's reply (`text`).
        Hook(END_EVENT, {}, run="session-end"),
    ),
    installed=f"{EVENT} hook (5 s) + {END_EVENT} hook (handoff)",
    removed=f"{EVENT} and {END_EVENT} hooks",
    shape=Entries(),
    prepare=version_1(NAME, "Cursor", EVENT),
)
DOCTOR = (
    checks.runs_lore,
    checks.server_if(
        _no_workspace,
        "WARN",
        "lore's server has no --workspace, and Cursor starts it in / with no roots → run "
        "`lore install cursor` again",
    ),
    checks.no_hook("no sessionStart hook in {path} → run `lore install cursor`"),
    _versionless,
    checks.each_hook(checks.hook_runs_lore),
    checks.first_run("open a project in Cursor and start an agent chat"),
    checks.end_run("let a Cursor agent answer once in a project"),
)
CLIENT = Client(NAME, "Cursor", MCP, HOOKS, DOCTOR, notes)
INSTALLER = CLIENT.installer()
