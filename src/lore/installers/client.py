"""A client described by its pieces: where lore's MCP server entry goes, where its hook goes, what
must be refused first, and what `lore doctor` checks. One engine installs, removes and checks them,
so every client merges, refuses and reports the same way."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lore.installers import Change, Check, Installer, Scope
from lore.installers.checks import Rule, Seen
from lore.installers.files import Edits
from lore.installers.hookfiles import HookFile
from lore.installers.scripts import ScriptFile
from lore.installers.servers import JsonServer, TomlServer

#: Refuses (ConfigError) what lore must not touch, before anything is planned: (scope, lore, edits).
Guard = Callable[[Scope, str, Edits], None]


def _none(scope: Scope) -> list[str]:
    return []


def _installed(seen: Seen) -> bool:
    return seen.server is not None or bool(seen.hooks)


@dataclass(frozen=True)
class Client:
    name: str
    title: str  # as the user knows it: "Gemini CLI"
    server: JsonServer | TomlServer
    hook: HookFile | ScriptFile | None = None
    doctor: tuple[Rule, ...] = ()
    notes: Callable[[Scope], list[str]] = _none
    guards: tuple[Guard, ...] = ()
    shown: Callable[[Seen], bool] = _installed  # whether doctor speaks of this scope at all
    hosted: bool = False  # supports `--server URL`

    def install(self, scope: Scope, lore: str, edits: Edits) -> list[Change]:
        scope = scope if self.hosted else dataclasses.replace(scope, server=None)
        for guard in self.guards:
            guard(scope, lore, edits)
        changes = [self.server.install(scope, lore, edits)]
        if self.hook is not None:
            changes.append(self.hook.install(scope, lore, edits, self.name))
        return changes

    def uninstall(self, scope: Scope, edits: Edits) -> list[Change]:
        removed = [self.server.uninstall(scope, edits)]
        if self.hook is not None:
            removed.append(self.hook.uninstall(scope, edits, self.name))
        changes = [change for change in removed if change is not None]
        path = self.server.path(scope)
        return changes or [Change(path, "unchanged", f"lore was not installed for {self.title}")]

    def seen(self, scope: Scope) -> Seen:
        server: Any = self.server.read(scope)
        hooks = self.hook.found(scope, self.name) if self.hook is not None else []
        hook_path = self.hook.path(scope) if self.hook is not None else None
        path = self.server.path(scope)
        return Seen(self.name, scope, server, path, self.server.lore(server), hooks, hook_path)

    def check(self, scope: Scope) -> list[Check]:
        seen = self.seen(scope)
        if not self.shown(seen):
            return []
        return [check for rule in self.doctor for check in rule(seen)]

    def installer(self) -> Installer:
        return Installer(self.name, self.install, self.uninstall, self.check, self.notes, self.hosted)
