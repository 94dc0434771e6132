"""What the installers share: lore's hook command and how to recognise it, a JSON file's table,
VS Code's user folder (VS Code and Cline keep their files there), and the doctor's checks of the
lore a client runs."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lore.installers import Check

SERVER = "lore"


def hook_command(lore: str, client: str, event: str = "session-start") -> str:
    return f"{shlex.quote(lore)} hook {event} --client {client}"


def is_ours(command: Any, client: str) -> bool:
    """Whether a hook command is one of lore's hooks (session-start, per-prompt, session-end) for
    this client (wherever lore lives)."""
    if not isinstance(command, str):
        return False
    pattern = rf"\bhook (?:session-start|prompt|session-end) --client {re.escape(client)}(?![\w-])"
    return re.search(pattern, command) is not None


def is_ours_text(text: str, client: str) -> bool:
    """Whether a script file holds lore's session-start hook for this client."""
    return any(is_ours(line, client) for line in text.splitlines())


def table(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    """`data[key]` as a dict (created when missing); refuses anything else."""
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        from lore.core.errors import ConfigError

        raise ConfigError(
            f"{path}: {key!r} is not a JSON object, so lore cannot add itself to it.",
            f"Fix {key!r} in {path} (it should map names to entries), then run the command again.",
        )
    return value


def vscode_user_dir(home: Path, env: Mapping[str, str], platform: str | None = None) -> Path:
    """VS Code's per-user settings folder (`Code/User`) on this platform."""
    import sys

    platform = platform or sys.platform
    if platform == "darwin":
        return home / "Library" / "Application Support" / "Code" / "User"
    if platform.startswith("win"):
        return Path(env.get("APPDATA") or home / "AppData" / "Roaming") / "Code" / "User"
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "Code" / "User"


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


def last_run(
    client: str, never_hint: str, env: Mapping[str, str] | None = None, event: str = "session-start"
) -> Check:
    """When the `event` hook (session-start, session-end) of `client` last ran, from the hook log."""
    from lore.core import hooklog as log

    mine = [e for e in log.entries(env) if e.client == client and e.event == event]
    what = "hook" if event == "session-start" else f"{event} hook"
    if not mine:
        return Check("WARN", f"{client}: no {event} hook run recorded yet → {never_hint}")
    last = mine[-1]
    if last.ok:
        return Check("OK", f"{client}: {what} last ran {last.at} ({last.detail})")
    return Check(
        "WARN", f"{client}: {what} last ran {last.at} and failed: {last.detail} → see `lore doctor` above"
    )
