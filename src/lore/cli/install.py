"""`lore install C` / `lore uninstall C`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from lore import installers


def lore_executable() -> str:
    """The venv's own `lore` entry point (never a shim): next to the running interpreter."""
    beside = Path(sys.executable).parent / "lore"
    if beside.exists():
        return str(beside)
    found = shutil.which("lore")
    return str(Path(found).resolve()) if found else str(beside)


def run(action: str, client: str) -> int:
    installer = installers.get(client)
    home = Path.home()
    changes = installer.install(home, lore_executable()) if action == "install" else installer.uninstall(home)
    for change in changes:
        print(f"{change.action:<9} {change.path}: {change.what}")
    if action == "install":
        print(f"Done. Start a new {client} session in a project; `lore doctor` shows when the hook last ran.")
    return 0
