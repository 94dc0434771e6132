"""A hook that is a whole file of lore's own: Cline's TaskStart script, OpenCode's plugin. lore
writes the file, and removes it on uninstall; a file there that is not lore's is left alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lore.installers import Change, Scope, shared
from lore.installers.checks import Found
from lore.installers.files import Edits


@dataclass(frozen=True)
class ScriptFile:
    name: str  # "TaskStart hook": what install, uninstall and doctor call it
    path: Callable[[Scope], Path]
    text: Callable[[str], str]  # the file for this lore executable
    lore: Callable[[str], str | None]  # the executable a file there runs (for doctor)
    installed: str | None = None  # what install says, when more than `name`
    executable: bool = False
    marked: bool = False  # lore's file names lore's hook command: one without it is the user's

    def install(self, scope: Scope, lore: str, edits: Edits, client: str) -> Change:
        path = self.path(scope)
        before, text = edits.text(path), self.text(lore)
        if before != text:
            edits.write_text(path, text, executable=self.executable)
        action = "unchanged" if before == text else ("updated" if before is not None else "added")
        return Change(path, action, self.installed or self.name)

    def mine(self, text: str | None, client: str) -> bool:
        return text is not None and (not self.marked or shared.is_ours_text(text, client))

    def uninstall(self, scope: Scope, edits: Edits, client: str) -> Change | None:
        path = self.path(scope)
        if not self.mine(edits.text(path), client):
            return None
        edits.delete(path)
        return Change(path, "removed", self.name)

    def found(self, scope: Scope, client: str) -> list[Found]:
        path = self.path(scope)
        text = Edits().text(path)
        if text is None or not self.mine(text, client):
            return []
        return [Found(f"{self.name} {path}", self.lore(text), text)]
