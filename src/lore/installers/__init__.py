"""Wiring lore into agents: one installer per client (a registry); an unknown name lists the known ones.

An installer merges lore's entries into the client's own config files (never clobbering the user's
other servers or hooks), is idempotent, backs up a file before changing it, and removes exactly
what it added on uninstall.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lore.errors import InvalidInput


@dataclass(frozen=True)
class Change:
    path: Path
    action: str  # "added" | "updated" | "removed" | "unchanged"
    what: str


@dataclass(frozen=True)
class Installer:
    name: str
    install: Callable[[Path, str], list[Change]]  # (home, lore executable) -> changes
    uninstall: Callable[[Path], list[Change]]


def registry() -> dict[str, Installer]:
    from lore.installers import claude_code

    return {"claude-code": claude_code.INSTALLER}


def get(name: str) -> Installer:
    known = registry()
    if name not in known:
        raise InvalidInput(
            f"No installer for {name!r} yet.",
            f"Known: {', '.join(sorted(known))}. Other agents: see the README for manual setup.",
        )
    return known[name]
