"""`lore service install|uninstall|status`: start the embedded database at each login (optional)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from lore.cli.install import lore_executable
from lore.core.errors import LoreError
from lore.installers import login


def run(action: str, enable: bool = True) -> int:
    try:
        start = login.for_platform(lore_executable(), os.environ)
    except ValueError:
        raise LoreError(
            f"`lore service` knows Linux (systemd) and macOS (launchd), not {sys.platform}.",
            "Start the database at login yourself with `lore db start`, or let the first session start it.",
        ) from None
    if action == "status":
        if start.path.exists():
            print(f"installed: {start.path} runs `lore db start` at each login")
        else:
            print(
                "not installed: the first session after a reboot starts the database (`lore service install`)"
            )
        return 0
    if action == "install":
        login.write(start)
        print(f"wrote {start.path}: `lore db start` at each login")
        return _run(start.enable, enable)
    if not start.path.exists():
        print(f"not installed ({start.path} does not exist); nothing to remove")
        return 0
    status = _run(start.disable, enable)
    start.path.unlink()
    print(f"removed {start.path}")
    return status


def _run(command: tuple[str, ...], enable: bool) -> int:
    """The enable/disable command, or the line to run it by hand when it cannot run here."""
    by_hand = " ".join(command)
    if not enable:
        print(f"to make it take effect: {by_hand}")
        return 0
    if shutil.which(command[0]) is None:
        print(f"{command[0]} is not on PATH; run `{by_hand}` where it is")
        return 1
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        print(f"`{by_hand}` failed: {why[0] if why else done.returncode} → run it in your login session")
        return 1
    print(f"ran `{by_hand}`")
    return 0
