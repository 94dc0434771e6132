"""Where a client keeps lore's MCP server entry: under `lore` in a JSON file's table of servers
(`mcpServers`, `servers`, `mcp`), or as a TOML table (Codex's `[mcp_servers.lore]`). Each puts the
entry there on install, takes it out on uninstall, and reads it back for `lore doctor`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore.installers import Change, Scope, shared, tomlfile
from lore.installers.files import Edits

SERVER = shared.SERVER
#: lore's server entry for this scope and this lore executable.
Entry = Callable[[Scope, str], dict[str, Any]]


def describe(entry: dict[str, Any], note: str) -> str:
    """What install says it wrote: the URL, or the command line the client runs."""
    if "url" in entry:
        target = str(entry["url"])
    else:
        command = entry["command"]
        target = " ".join(command if isinstance(command, list) else [command, *entry.get("args", [])])
    return f"MCP server {SERVER!r} → {target}{note}"


def removed(path: Path) -> Change:
    return Change(path, "removed", f"MCP server {SERVER!r}")


@dataclass(frozen=True)
class JsonServer:
    path: Callable[[Scope], Path]
    key: str  # the file's table of servers
    entry: Entry
    note: str = ""  # after the command line in what install says, e.g. " (trusted)"
    argv: bool = False  # the entry's command is an argv list (OpenCode), not one executable

    def install(self, scope: Scope, lore: str, edits: Edits) -> Change:
        path = self.path(scope)
        config = edits.json(path)
        entry = self.entry(scope, lore)
        servers = shared.table(config, self.key, path)
        action = (
            "unchanged" if servers.get(SERVER) == entry else ("updated" if SERVER in servers else "added")
        )
        if action != "unchanged":
            servers[SERVER] = entry
            edits.write_json(path, config)
        return Change(path, action, describe(entry, self.note))

    def uninstall(self, scope: Scope, edits: Edits) -> Change | None:
        path = self.path(scope)
        config = edits.json(path)
        if SERVER not in config.get(self.key, {}):
            return None
        del config[self.key][SERVER]
        edits.write_json(path, config)
        return removed(path)

    def read(self, scope: Scope) -> Any:
        """lore's entry as the file holds it (None: not there)."""
        return Edits().json(self.path(scope)).get(self.key, {}).get(SERVER)

    def lore(self, entry: Any) -> str | None:
        """The executable the entry runs."""
        command = entry.get("command") if isinstance(entry, dict) else None
        return shared.command_lore(command) if self.argv else command


@dataclass(frozen=True)
class TomlServer:
    path: Callable[[Scope], Path]
    table: tomlfile.Key
    entry: Entry
    note: str = ""

    def install(self, scope: Scope, lore: str, edits: Edits) -> Change:
        path = self.path(scope)
        text = edits.text(path)
        current = tomlfile.get(tomlfile.parse(text, path), self.table)
        entry = self.entry(scope, lore)
        action = "unchanged" if current == entry else ("updated" if current is not None else "added")
        if action != "unchanged":
            edits.write_text(path, tomlfile.set_table(text, self.table, entry, path))
        return Change(path, action, describe(entry, self.note))

    def uninstall(self, scope: Scope, edits: Edits) -> Change | None:
        path = self.path(scope)
        text = edits.text(path)
        if tomlfile.get(tomlfile.parse(text, path), self.table) is None:
            return None
        edits.write_text(path, tomlfile.remove_table(text, self.table, path))
        return removed(path)

    def read(self, scope: Scope) -> Any:
        path = self.path(scope)
        return tomlfile.get(tomlfile.parse(Edits().text(path), path), self.table)

    def lore(self, entry: Any) -> str | None:
        return entry.get("command") if isinstance(entry, dict) else None
