"""Claude Code. User scope: the MCP server in `~/.claude.json` (what `claude mcp add --scope user`
writes) and the SessionStart hook in `~/.claude/settings.json`. Project scope (`--project`): the
repository's `.mcp.json` and `.claude/settings.json`. Both call lore by absolute path, so neither
depends on PATH nor on a shim. (The plugin in the repo's `plugin/` is the alternative for
marketplace users; use one or the other, not both, or memory arrives twice.)"""

from __future__ import annotations

import shlex
from pathlib import Path

from lore.installers import Change, Check, Edits, Installer, Scope, shared

NAME = "claude-code"
SERVER = shared.SERVER
MATCHER = "startup|clear"
HOOK = "SessionStart hook (startup|clear, 5 s) + UserPromptSubmit hook (messages, inbox)"


def paths(scope: Scope) -> tuple[Path, Path]:
    """(MCP file, hooks file)."""
    if scope.project:
        return scope.project / ".mcp.json", scope.project / ".claude" / "settings.json"
    return scope.home / ".claude.json", scope.home / ".claude" / "settings.json"


def install(where: Path | Scope, lore: str, edits: Edits | None = None) -> list[Change]:
    scope = where if isinstance(where, Scope) else Scope(where)
    plan = Edits() if edits is None else edits
    changes = _install(scope, lore, plan)
    if edits is None:
        plan.apply()
    return changes


def uninstall(where: Path | Scope, edits: Edits | None = None) -> list[Change]:
    scope = where if isinstance(where, Scope) else Scope(where)
    plan = Edits() if edits is None else edits
    changes = _uninstall(scope, plan)
    if edits is None:
        plan.apply()
    return changes


def _server_entry(scope: Scope, lore: str) -> tuple[dict[str, object], str]:
    """Local: stdio `lore mcp`. Hosted (`--server`): HTTP with the token from $LORE_TOKEN (never
    written into a file) and the launch directory as the workspace (Claude Code expands ${VAR})."""
    if scope.server:
        headers = {"Authorization": "Bearer ${LORE_TOKEN}", "X-Lore-Workspace": "${PWD}"}
        return {"type": "http", "url": f"{scope.server}/mcp", "headers": headers}, f"{scope.server}/mcp"
    return {"type": "stdio", "command": lore, "args": ["mcp"], "env": {}}, f"{lore} mcp"


def _install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    mcp_path, settings_path = paths(scope)
    config = edits.json(mcp_path)
    entry, target = _server_entry(scope, lore)
    action = shared.put_entry(shared.table(config, "mcpServers", mcp_path), SERVER, entry)
    if action != "unchanged":
        edits.write_json(mcp_path, config)
    changes = [Change(mcp_path, action, f"MCP server {SERVER!r} → {target}")]

    settings = edits.json(settings_path)
    # Hosted: the hook fetches the text from the server (LORE_URL; LORE_TOKEN from the environment).
    prefix = f"LORE_URL={shlex.quote(scope.server)} " if scope.server else ""
    hook = {"type": "command", "command": prefix + shared.hook_command(lore, NAME), "timeout": 5}
    started = shared.put_hook_group(
        settings, "SessionStart", {"matcher": MATCHER, "hooks": [hook]}, NAME, settings_path
    )
    # What other agents sent (messages, inbox tasks) since the last prompt; usually prints nothing.
    # (Hosted mode has no per-prompt endpoint yet: no prompt hook there.)
    if scope.server:
        prompted = shared.drop_hook_group(settings, "UserPromptSubmit", NAME)
    else:
        prompt = {"type": "command", "command": shared.hook_command(lore, NAME, "prompt"), "timeout": 5}
        prompted = shared.put_hook_group(
            settings, "UserPromptSubmit", {"hooks": [prompt]}, NAME, settings_path
        )
    if started or prompted:
        edits.write_json(settings_path, settings)
        changes.append(Change(settings_path, "updated", HOOK))
    else:
        changes.append(Change(settings_path, "unchanged", HOOK))
    return changes


def _uninstall(scope: Scope, edits: Edits) -> list[Change]:
    changes = []
    mcp_path, settings_path = paths(scope)
    config = edits.json(mcp_path)
    if SERVER in config.get("mcpServers", {}):
        del config["mcpServers"][SERVER]
        edits.write_json(mcp_path, config)
        changes.append(Change(mcp_path, "removed", f"MCP server {SERVER!r}"))
    settings = edits.json(settings_path)
    prompted = shared.drop_hook_group(settings, "UserPromptSubmit", NAME)
    if shared.drop_hook_group(settings, "SessionStart", NAME) or prompted:
        edits.write_json(settings_path, settings)
        changes.append(Change(settings_path, "removed", "SessionStart and UserPromptSubmit hooks"))
    return shared.changes_or_nothing(changes, mcp_path, "Claude Code")


def check(scope: Scope) -> list[Check]:
    mcp_path, settings_path = paths(scope)
    server = Edits().json(mcp_path).get("mcpServers", {}).get(SERVER)
    hooks = shared.our_hooks(Edits().json(settings_path), "SessionStart", NAME)
    if server is None and not hooks:
        return []
    where = f"claude-code ({scope.label})"
    if isinstance(server, dict) and server.get("type") == "http":
        out = [Check("OK", f"{where} MCP server in {mcp_path} → {server.get('url')} (hosted)")]
        if not scope.env.get("LORE_TOKEN"):
            out.append(Check("WARN", f"{where}: hosted, but LORE_TOKEN is not set here → export it"))
    else:
        out = [
            shared.check_lore(
                server.get("command") if isinstance(server, dict) else None,
                f"{where} MCP server in {mcp_path}",
            )
        ]
    if not hooks:
        out.append(
            Check(
                "WARN",
                f"{where}: no SessionStart hook in {settings_path}: no memory before the "
                "first prompt → run `lore install claude-code` again",
            )
        )
    for _, _, hook in hooks:
        out.append(shared.check_lore(shared.command_lore(hook.get("command")), f"{where} SessionStart hook"))
    hosted = isinstance(server, dict) and server.get("type") == "http"
    if hooks and not hosted and not shared.our_hooks(Edits().json(settings_path), "UserPromptSubmit", NAME):
        out.append(
            Check(
                "WARN",
                f"{where}: no UserPromptSubmit hook in {settings_path}: messages from other agents show "
                "only at session start → run `lore install claude-code` again",
            )
        )
    out.append(shared.last_run(NAME, "start `claude` in a project", scope.env))
    return out


def notes(scope: Scope) -> list[str]:
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


INSTALLER = Installer(NAME, _install, _uninstall, check, notes, hosted=True)
