"""Claude Code. User scope: the MCP server in `~/.claude.json` (what `claude mcp add --scope user`
writes) and the SessionStart hook in `~/.claude/settings.json`. Project scope (`--project`): the
repository's `.mcp.json` and `.claude/settings.json`. Both call lore by absolute path, so neither
depends on PATH nor on a shim. (The plugin in the repo's `plugin/` is the alternative for
marketplace users; use one or the other, not both, or memory arrives twice.)"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from lore.core.errors import LoreError
from lore.installers import Change, Check, Edits, Scope, checks
from lore.installers.client import Client
from lore.installers.hookfiles import Hook, HookFile
from lore.installers.servers import JsonServer

NAME = "claude-code"


def paths(scope: Scope) -> tuple[Path, Path]:
    """(MCP file, hooks file)."""
    if scope.project:
        return scope.project / ".mcp.json", scope.project / ".claude" / "settings.json"
    return scope.home / ".claude.json", scope.home / ".claude" / "settings.json"


def server_entry(scope: Scope, lore: str) -> dict[str, Any]:
    """Local: stdio `lore mcp`. Hosted (`--server`): HTTP with the token from $LORE_TOKEN (never
    written into a file) and the launch directory as the workspace (Claude Code expands ${VAR}).
    Signed in (`lore login`): the token from `lore mcp-headers`, which Claude Code runs as the
    entry's headersHelper (LORE_TOKEN when set, else the login's, an OAuth one refreshed)."""
    if scope.server and scope.logged_in:
        helper = f"{shlex.quote(lore)} mcp-headers"
        headers = {"X-Lore-Workspace": "${PWD}"}
        return {"type": "http", "url": f"{scope.server}/mcp", "headers": headers, "headersHelper": helper}
    if scope.server:
        headers = {"Authorization": "Bearer ${LORE_TOKEN}", "X-Lore-Workspace": "${PWD}"}
        return {"type": "http", "url": f"{scope.server}/mcp", "headers": headers}
    return {"type": "stdio", "command": lore, "args": ["mcp"], "env": {}}


HOOKS = HookFile(
    lambda scope: paths(scope)[1],
    (
        Hook("SessionStart", matcher="startup|clear"),
        # What other agents sent (messages, inbox tasks) since the last prompt; usually prints
        # nothing. Hosted too (`--server`: the hooks ask the server's /api/hooks routes).
        Hook("UserPromptSubmit", run="prompt"),
        # The handoff (lore hook session-end): `Stop` ends each turn and carries the final message;
        # `SessionEnd` (exit, /clear) reads it from the transcript.
        Hook("Stop", run="session-end"),
        Hook("SessionEnd", run="session-end"),
    ),
    installed=(
        "SessionStart hook (startup|clear, 5 s) + UserPromptSubmit hook (messages, inbox) + Stop and "
        "SessionEnd hooks (handoff)"
    ),
    removed="SessionStart, UserPromptSubmit, Stop and SessionEnd hooks",
)


def _hosted(server: Any) -> bool:
    return isinstance(server, dict) and server.get("type") == "http"


def _server(seen: checks.Seen) -> list[Check]:
    if not _hosted(seen.server):
        if seen.server is not None and _signed_in(seen.scope):
            return seen.says(
                "WARN",
                "its MCP server is the local `lore mcp` (this machine's database), but this machine "
                "signed in to a server (`lore login`) → run `lore install claude-code` again",
            )
        return checks.runs_lore(seen)
    url = f"{seen.server_path} → {seen.server.get('url')} (hosted)"
    out = [Check("OK", f"{seen.where} MCP server in {url}")]
    helper = isinstance(seen.server.get("headersHelper"), str)
    if helper and not (seen.scope.env.get("LORE_TOKEN") or _signed_in(seen.scope)):
        out += seen.says("WARN", "hosted, but not signed in here → run `lore login URL`")
    elif not helper and not seen.scope.env.get("LORE_TOKEN"):
        out += seen.says("WARN", "hosted, but LORE_TOKEN is not set here → export it, or `lore login URL`")
    return out


def _signed_in(scope: Scope) -> bool:
    from lore.core import login

    try:
        return login.read(scope.env) is not None
    except LoreError:
        return False


def notes(scope: Scope) -> list[str]:
    if scope.server and scope.logged_in:
        return [
            "Signed in (`lore login`): Claude Code asks `lore mcp-headers` for the token; no token is "
            "written into a file. Push your spaces: `lore config push`."
        ]
    if scope.server:
        return [
            "Hosted: export LORE_TOKEN (from `lore token create YOU` on the server) in the shell that "
            "starts claude; the token is never written into a file. Push your spaces: `lore config push`."
        ]
    if scope.project:
        return [
            "Claude Code asks once to approve a project's .mcp.json servers, and reads a project's "
            ".claude/settings.json hooks only when started in that directory (not a subfolder)."
        ]
    return []


DOCTOR = (
    _server,
    checks.no_hook(
        "no SessionStart hook in {path}: no memory before the first prompt → "
        "run `lore install claude-code` again"
    ),
    checks.each_hook(checks.hook_runs_lore),
    checks.also_hook(
        HOOKS.found, "UserPromptSubmit", "messages from other agents show only at session start"
    ),
    checks.also_hook(HOOKS.found, "Stop", checks.NO_HANDOFF),
    checks.first_run("start `claude` in a project"),
    checks.end_run("end a `claude` session (or a turn) in a project"),
)
MCP = JsonServer(lambda scope: paths(scope)[0], "mcpServers", server_entry)
CLIENT = Client(NAME, "Claude Code", MCP, HOOKS, DOCTOR, notes, hosted=True)
INSTALLER = CLIENT.installer()


def install(where: Path | Scope, lore: str, edits: Edits | None = None) -> list[Change]:
    """Install into `where` (a home folder, or a scope); applied at once unless `edits` is given."""
    scope = where if isinstance(where, Scope) else Scope(where)
    plan = Edits() if edits is None else edits
    changes = CLIENT.install(scope, lore, plan)
    if edits is None:
        plan.apply()
    return changes


def uninstall(where: Path | Scope, edits: Edits | None = None) -> list[Change]:
    scope = where if isinstance(where, Scope) else Scope(where)
    plan = Edits() if edits is None else edits
    changes = CLIENT.uninstall(scope, plan)
    if edits is None:
        plan.apply()
    return changes
