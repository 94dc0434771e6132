"""Start the embedded database at login: a systemd user unit on Linux, a launchd agent on macOS.

Optional: without it the first session after a reboot starts the database itself, within the hook's
deadline. The unit runs `lore db start` once per login and leaves the server running (it does not
stop it at logout: a stop there would hold the database stopped, see lore.db.embedded.HELD)."""

from __future__ import annotations

import os
import plistlib
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

UNIT = "lore-db.service"
LABEL = "dev.lore.db"


@dataclass(frozen=True)
class LoginStart:
    platform: str  # "linux" or "darwin"
    path: Path  # the unit or plist lore writes
    text: str
    enable: tuple[str, ...]  # the command that makes it run at each login (and now)
    disable: tuple[str, ...]


def for_platform(lore: str, env: Mapping[str, str], platform: str | None = None) -> LoginStart:
    """What `lore service install` writes for this platform, running the `lore` at `lore`."""
    platform = platform or sys.platform
    home = Path(env.get("HOME") or Path.home())
    data = {k: env[k] for k in ("LORE_DATA_DIR", "LORE_CONFIG", "LORE_ROOT_BASE") if env.get(k)}
    if platform == "darwin":
        path = home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
        plist = launchd_plist(lore, data, home)
        return LoginStart(platform, path, plist, ("launchctl", "load", "-w", str(path)),
                          ("launchctl", "unload", "-w", str(path)))  # fmt: skip
    if platform.startswith("linux"):
        base = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        path = base / "systemd" / "user" / UNIT
        return LoginStart(platform, path, systemd_unit(lore, data),
                          ("systemctl", "--user", "enable", "--now", UNIT),
                          ("systemctl", "--user", "disable", UNIT))  # fmt: skip
    raise ValueError(platform)


def systemd_unit(lore: str, env: Mapping[str, str]) -> str:
    environment = "".join(f"Environment={_systemd_quote(f'{k}={v}')}\n" for k, v in sorted(env.items()))
    return (
        "# Written by `lore service install`; `lore service uninstall` removes it.\n"
        "[Unit]\n"
        "Description=lore: start the embedded PostgreSQL of the shared agent memory at login\n"
        "\n"
        "[Service]\n"
        "Type=oneshot\n"
        "RemainAfterExit=yes\n"
        f"{environment}"
        f"ExecStart={_systemd_quote(lore)} db start\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def launchd_plist(lore: str, env: Mapping[str, str], home: Path) -> str:
    """The agent's errors go to the data dir, else to the user's own ~/Library/Logs: never a fixed
    name in the shared /tmp, where another user could plant that name first (a link launchd would
    write through, or a file they read)."""
    data = env.get("LORE_DATA_DIR")
    log = Path(data) / "login-start.log" if data else home / "Library" / "Logs" / "lore-login-start.log"
    plist: dict[str, object] = {
        "Label": LABEL,
        "ProgramArguments": [lore, "db", "start"],
        "RunAtLoad": True,
        "StandardErrorPath": str(log),
    }
    if env:
        plist["EnvironmentVariables"] = dict(env)
    return plistlib.dumps(plist).decode()


def _systemd_quote(value: str) -> str:
    """A word for a unit file: double-quoted when it has spaces or quotes, `%` doubled (a
    specifier otherwise), `\\` and `"` escaped."""
    value = value.replace("%", "%%")
    if not any(c in value for c in " \t\"\\'$;"):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$") + '"'


def installed(env: Mapping[str, str], platform: str | None = None) -> Path | None:
    """The unit or plist lore wrote, if it is there."""
    try:
        path = for_platform("lore", env, platform).path
    except ValueError:
        return None
    return path if path.exists() else None


def describe(start: LoginStart) -> str:
    return shlex.join(start.enable)


def write(start: LoginStart) -> None:
    start.path.parent.mkdir(parents=True, exist_ok=True)
    tmp = start.path.with_name(start.path.name + ".tmp")
    tmp.write_text(start.text)
    os.replace(tmp, start.path)
