"""Gemini CLI: `~/.gemini/settings.json` (project: `.gemini/settings.json`) holds both the MCP
server and the SessionStart hook.

- The hook group has no `matcher`: Gemini CLI compares a SessionStart matcher with the source by
  plain equality, so `startup|clear` would never fire. lore's hook itself skips resume/compact.
- Its timeout is in milliseconds. Only the nested `hookSpecificOutput.additionalContext` reaches the
  model (inside `<hook_context>` before the first prompt); the hook's environment holds the user's
  API key, which lore never logs.
- The handoff (`lore hook session-end`): `AfterAgent` (each turn's end, with the final text) and
  `SessionEnd` (best effort: Gemini CLI does not wait for it), neither with a matcher.
- `trust: true`: in headless runs (`gemini -p`) Gemini CLI leaves out every tool that would ask for
  confirmation, so an untrusted lore would offer no tools at all there. lore's tools only read and
  write lore's memory, in the session's own space.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, checks
from lore.installers.client import Client
from lore.installers.hookfiles import Hook, HookFile
from lore.installers.servers import JsonServer

NAME = "gemini"


def path(scope: Scope) -> Path:
    return (scope.project or scope.home) / ".gemini" / "settings.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"command": lore, "args": ["mcp"], "trust": True}


def _untrusted(server: Any) -> bool:
    return isinstance(server, dict) and not server.get("trust")


def _matcher(seen: checks.Seen, found: checks.Found) -> list[Check]:
    if found.group.get("matcher") in (None, "", "*"):
        return []
    return seen.says(
        "FAIL",
        f"the hook's matcher {found.group.get('matcher')!r} is compared with the session source by "
        "equality, so it rarely fires → remove the matcher (`lore install gemini` writes none)",
    )


MCP = JsonServer(path, "mcpServers", lambda scope, lore: server_entry(lore), " (trusted)")
HOOKS = HookFile(
    path,
    (
        Hook("SessionStart", {"name": "lore", "type": "command"}, timeout=5000),
        # The handoff: `AfterAgent` ends each turn and carries the final text (`prompt_response`);
        # `SessionEnd` is best effort (Gemini CLI does not wait for it) and reads the transcript.
        Hook("AfterAgent", {"name": "lore-handoff", "type": "command"}, timeout=5000, run="session-end"),
        Hook("SessionEnd", {"name": "lore-handoff", "type": "command"}, timeout=5000, run="session-end"),
    ),
    installed="SessionStart hook (5 s) + AfterAgent and SessionEnd hooks (handoff)",
    removed="SessionStart, AfterAgent and SessionEnd hooks",
)


DOCTOR = (
    checks.runs_lore,
    checks.server_if(
        _untrusted,
        "WARN",
        "lore's server is not trusted, so `gemini -p` offers none of its tools → run "
        "`lore install gemini` again (sets trust)",
    ),
    checks.no_hook("no SessionStart hook in {path} → run `lore install gemini`"),
    checks.each_hook(_matcher, checks.hook_runs_lore),
    checks.also_hook(HOOKS.found, "AfterAgent", checks.NO_HANDOFF),
    checks.first_run("start `gemini` in a project"),
    checks.end_run("end a `gemini` turn or session in a project"),
)
CLIENT = Client(NAME, "Gemini CLI", MCP, HOOKS, DOCTOR)
INSTALLER = CLIENT.installer()
