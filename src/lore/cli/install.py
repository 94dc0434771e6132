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


def _check_server(server: str, installer: installers.Installer) -> None:
    from urllib.parse import urlsplit

    from lore.core.errors import InvalidInput

    parts = urlsplit(server)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InvalidInput(
            f"--server {server!r} is not an http(s) URL.",
            "Pass the server's base URL, e.g. https://lore.example.com",
        )
    if not installer.hosted:
        known = ", ".join(sorted(n for n, i in installers.registry().items() if i.hosted))
        raise InvalidInput(
            f"`--server` is not supported for {installer.name} yet.",
            f"Supported: {known}. For {installer.name}, see docs/deploy.md (an HTTP MCP entry with the "
            "Authorization and X-Lore-Workspace headers, and LORE_URL/LORE_TOKEN for the hook).",
        )


def _server_in_use(
    given: str | None, installer: installers.Installer, action: str
) -> tuple[str | None, bool]:
    """The server an install wires in: `--server URL`, else the one this machine uses (`LORE_URL`, else
    `lore login`'s); and whether it is the login's (its token then comes from `lore mcp-headers`)."""
    from lore.core import login
    from lore.hooks import credentials

    found = credentials.where(os.environ, given)
    url, logged_in = (found[0], found[1] is not None) if found else (None, False)
    if given or not url or action != "install" or installer.hosted:
        return (url if action == "install" else given), logged_in
    from lore.core.errors import InvalidInput

    known = ", ".join(sorted(n for n, i in installers.registry().items() if i.hosted))
    raise InvalidInput(
        f"This machine uses the server {login.origin(url)}, and {installer.name} cannot be wired to a "
        "server yet (a local install would keep its memory apart from the server's).",
        f"Clients that can: {known}. For {installer.name}, see docs/deploy.md (an HTTP MCP entry by hand); "
        "`lore logout` (and unset LORE_URL) to install it with this machine's own database.",
    )


def project_root(cwd: Path) -> Path:
    """`--project`: the checkout that holds `cwd` (its git top-level), else `cwd` itself."""
    from lore.core.workspace import git_info

    info = git_info(cwd)
    return info.toplevel if info is not None else Path(os.path.abspath(cwd))


def run(
    action: str, client: str, project: bool = False, dry_run: bool = False, server: str | None = None
) -> int:
    installer = installers.get(client)
    server, logged_in = _server_in_use(server, installer, action)
    if server:
        _check_server(server, installer)
    root = project_root(Path.cwd()) if project else None
    scope = installers.scope(root, server=server, logged_in=logged_in)
    edits = Edits()
    if action == "install":
        changes = installer.install(scope, lore_executable(), edits)
    else:
        changes = installer.uninstall(scope, edits)
    for change in changes:
        new = change.action == "added" and not change.path.exists()
        print(f"{change.action:<9} {change.path}: {change.what}{' (new file)' if new else ''}")
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
