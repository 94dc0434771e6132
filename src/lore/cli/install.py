"""`lore install C` / `lore uninstall C` [--project] [--dry-run]."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from lore import installers
from lore.installers import Edits


def lore_executable() -> str:
    """The venv's own `lore` entry point (never a shim): next to the running interpreter."""
    beside = Path(sys.executable).parent / "lore"
    if beside.exists():
        return str(beside)
    found = shutil.which("lore")
    return str(Path(found).resolve()) if found else str(beside)


def project_root(cwd: Path) -> Path:
    """`--project`: the checkout that holds `cwd` (its git top-level), else `cwd` itself."""
    from lore.workspace import git_info

    info = git_info(cwd)
    return info.toplevel if info is not None else Path(os.path.abspath(cwd))


def run(action: str, client: str, project: bool = False, dry_run: bool = False) -> int:
    installer = installers.get(client)
    scope = installers.scope(project_root(Path.cwd()) if project else None)
    edits = Edits()
    if action == "install":
        changes = installer.install(scope, lore_executable(), edits)
    else:
        changes = installer.uninstall(scope, edits)
    for change in changes:
        print(f"{change.action:<9} {change.path}: {change.what}")
    if action == "install":
        for note in installer.notes(scope):
            print(f"note: {note}")
    if dry_run:
        diff = edits.diff()
        print("dry run: nothing was written." + (" The change would be:" if diff else " Nothing to change."))
        if diff:
            print(diff, end="")
        return 0
    edits.apply()
    if action == "install":
        print(f"Done ({scope.label} scope): start a new {client} session; `lore doctor` checks it.")
    return 0
