"""What the installers share: lore's hook command and how to recognise it, merging a named entry
into a table of servers, the Claude-shaped hook groups several clients use, and doctor checks."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lore.installers import Change, Check

SERVER = "lore"


def hook_command(lore: str, client: str, event: str = "session-start") -> str:
    return f"{shlex.quote(lore)} hook {event} --client {client}"


def is_ours(command: Any, client: str) -> bool:
    """Whether a hook command is one of lore's hooks (session-start, per-prompt) for this client
    (wherever lore lives)."""
    if not isinstance(command, str):
        return False
    pattern = rf"\bhook (?:session-start|prompt) --client {re.escape(client)}(?![\w-])"
    return re.search(pattern, command) is not None


def put_entry(table: dict[str, Any], name: str, entry: Any) -> str:
    """Put `entry` under `name`; the action it took: added, updated or unchanged."""
    if table.get(name) == entry:
        return "unchanged"
    action = "updated" if name in table else "added"
    table[name] = entry
    return action


def table(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    """`data[key]` as a dict (created when missing); refuses anything else."""
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        from lore.errors import ConfigError

        raise ConfigError(
            f"{path}: {key!r} is not a JSON object, so lore cannot add itself to it.",
            f"Fix {key!r} in {path} (it should map names to entries), then run the command again.",
        )
    return value


# --- Claude-shaped hooks: {"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command", ...}]}]}}


def without_ours(groups: Any, client: str) -> list[Any]:
    """The user's hook groups with lore's hook taken out (a group left empty is dropped)."""
    kept = []
    for group in groups if isinstance(groups, list) else []:
        if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
            kept.append(group)
            continue
        hooks = [h for h in group["hooks"] if not (isinstance(h, dict) and is_ours(h.get("command"), client))]
        if hooks:
            kept.append({**group, "hooks": hooks})
        elif not group["hooks"]:
            kept.append(group)
    return kept


def put_hook_group(
    settings: dict[str, Any], event: str, group: dict[str, Any], client: str, path: Path
) -> bool:
    """Replace lore's group for `event` with `group`; True when anything changed."""
    before = json.dumps(settings, sort_keys=True)
    hooks = table(settings, "hooks", path)
    hooks[event] = [*without_ours(hooks.get(event, []), client), group]
    return json.dumps(settings, sort_keys=True) != before


def drop_hook_group(settings: dict[str, Any], event: str, client: str) -> bool:
    """Take lore's hook out of `event` (and the emptied containers); True when anything changed."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict) or event not in hooks:
        return False
    kept = without_ours(hooks[event], client)
    if kept == hooks[event]:
        return False
    if kept:
        hooks[event] = kept
    else:
        del hooks[event]
    if not hooks:
        settings.pop("hooks")
    return True


def our_hooks(settings: dict[str, Any], event: str, client: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(group index, hook index, hook) of lore's hooks in Claude-shaped `settings[hooks][event]`."""
    found = []
    groups = settings.get("hooks", {}).get(event, []) if isinstance(settings.get("hooks"), dict) else []
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        hooks = group.get("hooks") if isinstance(group, dict) else None
        for h, hook in enumerate(hooks if isinstance(hooks, list) else []):
            if isinstance(hook, dict) and is_ours(hook.get("command"), client):
                found.append((g, h, hook))
    return found


# --- doctor -------------------------------------------------------------------------------------


def command_lore(command: Any) -> str | None:
    """The executable a command line runs (its first word), or None."""
    if isinstance(command, list):
        return str(command[0]) if command else None
    if not isinstance(command, str):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):  # `LORE_URL=... lore hook ...`
        words = words[1:]
    return words[0] if words else None


def check_lore(executable: str | None, what: str) -> Check:
    """The command a client runs for lore exists and can be executed."""
    if not executable:
        return Check("FAIL", f"{what}: no command → run `lore install` for this client again")
    path = Path(executable)
    if not path.is_absolute():
        return Check(
            "WARN",
            f"{what} runs `{executable}` from PATH (a shim or another venv may answer) "
            "→ `lore install` again writes the absolute path",
        )
    if not (path.is_file() and os.access(path, os.X_OK)):
        return Check(
            "FAIL",
            f"{what} points at {executable}, which does not exist (lore moved or its venv "
            "was removed) → run `lore install` for this client again from the new lore",
        )
    return Check("OK", f"{what} → {executable}")


def last_run(client: str, never_hint: str, env: Mapping[str, str] | None = None) -> Check:
    """When the session-start hook of `client` last ran, from the hook log."""
    from lore.hooks import log

    mine = [e for e in log.entries(env) if e.client == client and e.event == "session-start"]
    if not mine:
        return Check("WARN", f"{client}: no session-start hook run recorded yet → {never_hint}")
    last = mine[-1]
    if last.ok:
        return Check("OK", f"{client}: hook last ran {last.at} ({last.detail})")
    return Check(
        "WARN", f"{client}: hook last ran {last.at} and failed: {last.detail} → see `lore doctor` above"
    )


def changes_or_nothing(changes: Sequence[Change], path: Path, client: str) -> list[Change]:
    return list(changes) or [Change(path, "unchanged", f"lore was not installed for {client}")]


def vscode_user_dir(home: Path, env: Mapping[str, str], platform: str | None = None) -> Path:
    """VS Code's per-user settings folder (`Code/User`) on this platform."""
    import sys

    platform = platform or sys.platform
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if platform.startswith("win"):
        return Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Code" / "User"
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User"


def is_ours_text(text: str, client: str) -> bool:
    """Whether a script file holds lore's session-start hook for this client."""
    return any(is_ours(line, client) for line in text.splitlines())
