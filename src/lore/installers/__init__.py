"""Wiring lore into agents: one installer per client (a registry); an unknown name lists the known ones.

An installer merges lore's entries into the client's own config files (never clobbering the user's
other servers or hooks), is idempotent, backs up a file before changing it, and removes exactly
what it added on uninstall. It plans its edits (`Edits`) before anything is written, so
`--dry-run` can show them and a refusal leaves every file as it was. Its `check` is what
`lore doctor` says about that client; its `notes` are what the user must know or do next (a client
with no pre-prompt injection says so there, never silently).

Each client's module describes it as a `client.Client`: where lore's MCP server entry goes
(`servers`), where its hook goes (`hookfiles`: entries in a JSON hook file; `scripts`: a file of
lore's own), what must be refused first, and the rules of its doctor check (`checks`). The one
engine in `client` installs, removes and checks those pieces; `files.Edits` plans the writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lore.core.errors import InvalidInput, LoreError
from lore.installers.files import Edits

__all__ = ["Change", "Check", "Edits", "Installer", "Scope", "doctor", "get", "names", "registry", "scope"]

#: Every client lore can be installed into, in the order the docs list them.
CLIENTS = ("claude-code", "gemini", "codex", "cursor", "vscode", "opencode", "cline", "copilot")


@dataclass(frozen=True)
class Change:
    path: Path
    action: str  # "added" | "updated" | "removed" | "unchanged"
    what: str


@dataclass(frozen=True)
class Check:
    level: str  # "OK" | "WARN" | "FAIL"
    text: str  # for anything not OK: what is wrong → the fix


@dataclass(frozen=True)
class Scope:
    """Where to install: the user's own config (default) or one repository's (`--project`)."""

    home: Path
    project: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    server: str | None = None  # `--server URL`: a `lore serve --sign-in` instead of the local lore
    # The server is the one `lore login` stored: the MCP entry asks `lore mcp-headers` for the token
    # (Claude Code's headersHelper), and the hooks find the server in the login (no LORE_URL written).
    logged_in: bool = False

    @property
    def label(self) -> str:
        return f"project {self.project}" if self.project else "user"


@dataclass(frozen=True)
class Installer:
    name: str
    install: Callable[[Scope, str, Edits], list[Change]]  # (scope, lore executable, edits) -> changes
    uninstall: Callable[[Scope, Edits], list[Change]]
    check: Callable[[Scope], list[Check]]  # [] when lore is not installed there
    notes: Callable[[Scope], list[str]] = lambda scope: []
    hosted: bool = False  # supports `--server URL`


def registry() -> dict[str, Installer]:
    from lore.installers import claude_code, cline, codex, copilot, cursor, gemini, opencode, vscode

    found = [claude_code, gemini, codex, cursor, vscode, opencode, cline, copilot]
    return {module.INSTALLER.name: module.INSTALLER for module in found}


def names() -> tuple[str, ...]:
    return CLIENTS


def get(name: str) -> Installer:
    known = registry()
    if name not in known:
        import difflib

        near = difflib.get_close_matches(name, list(CLIENTS), n=1, cutoff=0.5)
        meant = f"Did you mean `{near[0]}`? " if near else ""
        raise InvalidInput(
            f"No installer for {name!r}.",
            f"{meant}Known: {', '.join(CLIENTS)}. "
            "Other agents: run `lore mcp` as a stdio MCP server by hand.",
        )
    return known[name]


def scope(
    project: Path | None = None,
    env: Mapping[str, str] | None = None,
    server: str | None = None,
    logged_in: bool = False,
) -> Scope:
    env = dict(os.environ if env is None else env)
    home = Path(env.get("HOME") or Path.home())
    return Scope(home, project, env, server.rstrip("/") if server else None, logged_in)


NOT_INSTALLED = Check(
    "WARN", f"lore is not installed into any agent → `lore install CLIENT` ({', '.join(CLIENTS)})"
)


def doctor(cwd: Path, env: Mapping[str, str] | None = None) -> list[Check]:
    """What `lore doctor` says about every client lore is installed into: the user's files, and
    the files of the repository `cwd` is in."""
    from lore.core.workspace import git_info

    user = scope(None, env)
    info = git_info(cwd)
    project = info.toplevel if info is not None else None
    scopes = [user] + ([scope(project, env)] if project and project != user.home else [])
    out: list[Check] = []
    for installer in registry().values():
        for where in scopes:
            try:
                out.extend(installer.check(where))
            except LoreError as exc:
                out.append(Check("FAIL", f"{installer.name} ({where.label}): {exc.message} → {exc.hint}"))
    return out or [NOT_INSTALLED]
