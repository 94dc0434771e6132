"""Codex CLI: the MCP server in `config.toml` (`$CODEX_HOME`, else `~/.codex`; project:
`.codex/config.toml`, read only for trusted projects) and the SessionStart hook in `hooks.json`
beside it (the same shape as Claude Code's).

- `required = true`: otherwise Codex may send the first request before the server is up, and the
  tools are missing from it (seen in 5 of 6 runs). `env_vars` passes lore's own variables
  (`LORE_CONFIG`, `LORE_DATABASE_URL`, ...) through: Codex gives a server only HOME and PATH.
- The handoff (`lore hook session-end`): `Stop` (each turn's end, with `last_assistant_message`)
  and `SessionEnd` (Codex clamps its timeout to 3 s).
- Codex skips an untrusted hook WITHOUT any message. The user trusts it once (Codex asks "Hooks need
  review" at start, or `/hooks`); Codex then records `trusted_hash` under `[hooks.state."<hooks.json
  path>:session_start:<group>:<hook>"]` in the user's config.toml, which `lore doctor` reads. A hook
  whose command changes (lore moved) needs trusting again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, checks, tomlfile
from lore.installers.client import Client
from lore.installers.files import Edits
from lore.installers.hookfiles import Hook, HookFile
from lore.installers.servers import SERVER, TomlServer

NAME = "codex"
TABLE = ("mcp_servers", SERVER)
#: Codex gives a stdio server only HOME, PATH and the variables named here (seen with 0.171).
PASS_ENV = [
    "LORE_CONFIG",
    "LORE_DATA_DIR",
    "LORE_DATABASE_URL",
    "LORE_SPACE",
    "LORE_EMBEDDER",
    "LORE_URL",
    "LORE_TOKEN",
]


def user_dir(scope: Scope) -> Path:
    explicit = scope.env.get("CODEX_HOME")
    return Path(explicit) if explicit else scope.home / ".codex"


def paths(scope: Scope) -> tuple[Path, Path]:
    """(config.toml, hooks.json) of the scope."""
    base = scope.project / ".codex" if scope.project else user_dir(scope)
    return base / "config.toml", base / "hooks.json"


def server_entry(lore: str) -> dict[str, Any]:
    return {"command": lore, "args": ["mcp"], "required": True, "env_vars": PASS_ENV}


def _user_config(scope: Scope) -> tuple[Path, dict[str, Any]]:
    """The user's config.toml, where Codex records what the user turned off and trusted."""
    user_config = user_dir(scope) / "config.toml"
    return user_config, tomlfile.parse(Edits().text(user_config), user_config)


def _entries(table: Any, path: Path, suffix: str = "") -> list[Any]:
    """What a table of Codex's state holds under `path` (as written, or resolved) + `suffix`."""
    if not isinstance(table, dict):
        return []
    return [table.get(base + suffix) for base in {str(path), str(path.resolve())}]


def _config(seen: checks.Seen) -> list[Check]:
    """What the user's config.toml turns off (hooks), or has not trusted (this project)."""
    user_path, user_config = _user_config(seen.scope)
    out = []
    if tomlfile.get(user_config, ("features", "hooks")) is False:
        text = f"hooks are turned off (`[features] hooks = false` in {user_path}) → remove that line"
        out += seen.says("FAIL", text)
    project = seen.scope.project
    entries = _entries(user_config.get("projects"), project) if project else []
    if project and not any(isinstance(e, dict) and e.get("trust_level") == "trusted" for e in entries):
        out += seen.says(
            "WARN",
            f"Codex reads {seen.server_path} only for a trusted project → start `codex` in {project} "
            "and trust the folder",
        )
    return out


def _trusted(seen: checks.Seen, event: str, found: checks.Found) -> bool:
    state = tomlfile.get(_user_config(seen.scope)[1], ("hooks", "state"))
    key = ":{}:{}:{}".format(event, *found.place)
    entries = _entries(state, paths(seen.scope)[1], key)
    return any(isinstance(e, dict) and e.get("trusted_hash") for e in entries)


def _hook_trust(seen: checks.Seen, found: checks.Found) -> list[Check]:
    if _trusted(seen, "session_start", found):
        return seen.says("OK", "the SessionStart hook is trusted (Codex asks again if it changes)")
    return seen.says(
        "WARN",
        "Codex has not trusted lore's hook yet and skips it without a word → start `codex` once and "
        'trust it when it says "Hooks need review" (or `/hooks`)',
    )


def _end_hooks(seen: checks.Seen) -> list[Check]:
    """The Stop hook (the handoff): there, and trusted like the SessionStart hook."""
    if not seen.hooks:
        return []
    stops = HOOKS.found(seen.scope, NAME, "Stop")
    if not stops:
        return checks.hook_missing(seen, "Stop", checks.NO_HANDOFF)
    if any(_trusted(seen, "stop", found) for found in stops):
        return []
    return seen.says(
        "WARN",
        "Codex has not trusted lore's Stop hook (the handoff) yet and skips it without a word → trust it "
        'when Codex says "Hooks need review" (or `/hooks`)',
    )


def notes(scope: Scope) -> list[str]:
    out = [
        "Codex runs a new hook only after you trust it, and skips an untrusted one without a word: "
        'start `codex` once and choose Trust when it says "Hooks need review" (or run /hooks). '
        "`lore doctor` shows whether it is trusted."
    ]
    if scope.project:
        out.append(f"Codex reads {paths(scope)[0]} only when you trust the project folder.")
    return out


MCP = TomlServer(lambda scope: paths(scope)[0], TABLE, lambda scope, lore: server_entry(lore), " (required)")
HOOKS = HookFile(
    lambda scope: paths(scope)[1],
    (
        Hook("SessionStart", matcher="startup|clear"),
        # The handoff: `Stop` ends each turn with `last_assistant_message`; `SessionEnd` at exit
        # (Codex clamps a SessionEnd hook's timeout to 3 s: seen with 0.171).
        Hook("Stop", run="session-end"),
        Hook("SessionEnd", timeout=3, run="session-end"),
    ),
    installed="SessionStart hook (startup|clear, 5 s) + Stop and SessionEnd hooks (handoff)",
    removed="SessionStart, Stop and SessionEnd hooks",
)
DOCTOR = (
    checks.runs_lore,
    checks.server_if(
        lambda server: isinstance(server, dict) and not server.get("required"),
        "WARN",
        "lore's server is not `required`, so Codex may send the first request before lore's tools "
        "are up → run `lore install codex` again",
    ),
    _config,
    checks.no_hook("no SessionStart hook in {path} → run `lore install codex`"),
    checks.each_hook(checks.hook_runs_lore, _hook_trust),
    _end_hooks,
    checks.first_run("start `codex` in a project (and trust the hook)"),
    checks.end_run("end a `codex` turn in a project (and trust the Stop hook)"),
)
CLIENT = Client(NAME, "Codex", MCP, HOOKS, DOCTOR, notes)
INSTALLER = CLIENT.installer()
