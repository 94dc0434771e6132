"""Codex CLI: the MCP server in `config.toml` (`$CODEX_HOME`, else `~/.codex`; project:
`.codex/config.toml`, read only for trusted projects) and the SessionStart hook in `hooks.json`
beside it (the same shape as Claude Code's).

- `required = true`: otherwise Codex may send the first request before the server is up, and the
  tools are missing from it (seen in 5 of 6 runs). `env_vars` passes lore's own variables
  (`LORE_CONFIG`, `LORE_DATABASE_URL`, ...) through: Codex gives a server only HOME and PATH.
- Codex skips an untrusted hook WITHOUT any message. The user trusts it once (Codex asks "Hooks need
  review" at start, or `/hooks`); Codex then records `trusted_hash` under `[hooks.state."<hooks.json
  path>:session_start:<group>:<hook>"]` in the user's config.toml, which `lore doctor` reads. A hook
  whose command changes (lore moved) needs trusting again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Change, Check, Edits, Installer, Scope, shared, tomlfile

NAME = "codex"
SERVER = shared.SERVER
TABLE = ("mcp_servers", SERVER)
MATCHER = "startup|clear"
HOOK = "SessionStart hook (startup|clear, 5 s)"


def user_dir(scope: Scope) -> Path:
    explicit = scope.env.get("CODEX_HOME")
    return Path(explicit) if explicit else scope.home / ".codex"


def paths(scope: Scope) -> tuple[Path, Path]:
    """(config.toml, hooks.json) of the scope."""
    base = scope.project / ".codex" if scope.project else user_dir(scope)
    return base / "config.toml", base / "hooks.json"


#: Codex gives a stdio server only HOME, PATH and the variables named here (seen with 0.171).
PASS_ENV = ["LORE_CONFIG", "LORE_DATA_DIR", "LORE_DATABASE_URL", "LORE_SPACE", "LORE_EMBEDDER", "LORE_URL",
            "LORE_TOKEN"]  # fmt: skip


def server_entry(lore: str) -> dict[str, Any]:
    return {"command": lore, "args": ["mcp"], "required": True, "env_vars": PASS_ENV}


def install(scope: Scope, lore: str, edits: Edits) -> list[Change]:
    config_path, hooks_path = paths(scope)
    text = edits.text(config_path)
    current = tomlfile.get(tomlfile.parse(text, config_path), TABLE)
    wanted = server_entry(lore)
    if current == wanted:
        action = "unchanged"
    else:
        action = "updated" if current is not None else "added"
        edits.write_text(config_path, tomlfile.set_table(text, TABLE, wanted, config_path))
    changes = [Change(config_path, action, f"MCP server {SERVER!r} → {lore} mcp (required)")]

    hooks = edits.json(hooks_path)
    hook = {"type": "command", "command": shared.hook_command(lore, NAME), "timeout": 5}
    if shared.put_hook_group(hooks, "SessionStart", {"matcher": MATCHER, "hooks": [hook]}, NAME, hooks_path):
        edits.write_json(hooks_path, hooks)
        changes.append(Change(hooks_path, "updated", HOOK))
    else:
        changes.append(Change(hooks_path, "unchanged", HOOK))
    return changes


def uninstall(scope: Scope, edits: Edits) -> list[Change]:
    config_path, hooks_path = paths(scope)
    changes = []
    text = edits.text(config_path)
    if tomlfile.get(tomlfile.parse(text, config_path), TABLE) is not None:
        edits.write_text(config_path, tomlfile.remove_table(text, TABLE, config_path))
        changes.append(Change(config_path, "removed", f"MCP server {SERVER!r}"))
    hooks = edits.json(hooks_path)
    if shared.drop_hook_group(hooks, "SessionStart", NAME):
        edits.write_json(hooks_path, hooks)
        changes.append(Change(hooks_path, "removed", "SessionStart hook"))
    return shared.changes_or_nothing(changes, config_path, "Codex")


def check(scope: Scope) -> list[Check]:
    config_path, hooks_path = paths(scope)
    config = tomlfile.parse(Edits().text(config_path), config_path)
    server = tomlfile.get(config, TABLE)
    hooks = shared.our_hooks(Edits().json(hooks_path), "SessionStart", NAME)
    if server is None and not hooks:
        return []
    where = f"codex ({scope.label})"
    command = server.get("command") if isinstance(server, dict) else None
    out = [shared.check_lore(command, f"{where} MCP server in {config_path}")]
    if isinstance(server, dict) and not server.get("required"):
        out.append(
            Check(
                "WARN",
                f"{where}: lore's server is not `required`, so Codex may send the first "
                "request before lore's tools are up → run `lore install codex` again",
            )
        )
    user_config_path = user_dir(scope) / "config.toml"
    user_config = tomlfile.parse(Edits().text(user_config_path), user_config_path)
    if tomlfile.get(user_config, ("features", "hooks")) is False:
        out.append(
            Check(
                "FAIL",
                f"{where}: hooks are turned off (`[features] hooks = false` in "
                f"{user_config_path}) → remove that line",
            )
        )
    if scope.project and not _project_trusted(user_config, scope.project):
        out.append(
            Check(
                "WARN",
                f"{where}: Codex reads {config_path} only for a trusted project → start "
                f"`codex` in {scope.project} and trust the folder",
            )
        )
    if not hooks:
        out.append(Check("WARN", f"{where}: no SessionStart hook in {hooks_path} → run `lore install codex`"))
    for g, h, hook in hooks:
        out.append(shared.check_lore(shared.command_lore(hook.get("command")), f"{where} SessionStart hook"))
        if _trusted(user_config, hooks_path, g, h):
            out.append(
                Check("OK", f"{where}: the SessionStart hook is trusted (Codex asks again if it changes)")
            )
        else:
            out.append(
                Check(
                    "WARN",
                    f"{where}: Codex has not trusted lore's hook yet and skips it without a "
                    'word → start `codex` once and trust it when it says "Hooks need '
                    'review" (or `/hooks`)',
                )
            )
    out.append(shared.last_run(NAME, "start `codex` in a project (and trust the hook)", scope.env))
    return out


def _trusted(user_config: dict[str, Any], hooks_path: Path, group: int, hook: int) -> bool:
    state = tomlfile.get(user_config, ("hooks", "state"))
    if not isinstance(state, dict):
        return False
    for base in {str(hooks_path), str(hooks_path.resolve())}:
        entry = state.get(f"{base}:session_start:{group}:{hook}")
        if isinstance(entry, dict) and entry.get("trusted_hash"):
            return True
    return False


def _project_trusted(user_config: dict[str, Any], project: Path) -> bool:
    projects = user_config.get("projects")
    if not isinstance(projects, dict):
        return False
    for base in {str(project), str(project.resolve())}:
        entry = projects.get(base)
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


def notes(scope: Scope) -> list[str]:
    out = [
        "Codex runs a new hook only after you trust it, and skips an untrusted one without a word: "
        'start `codex` once and choose Trust when it says "Hooks need review" (or run /hooks). '
        "`lore doctor` shows whether it is trusted."
    ]
    if scope.project:
        out.append(f"Codex reads {paths(scope)[0]} only when you trust the project folder.")
    return out


INSTALLER = Installer(NAME, install, uninstall, check, notes)
