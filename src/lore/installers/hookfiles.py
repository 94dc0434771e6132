"""lore's hooks in a client's JSON hook file (`HookFile`). (A hook that is a whole file of lore's
own is a `scripts.ScriptFile`.)

A JSON hook file maps each event to a list, in one of two shapes: Claude-shaped groups
(`{"hooks": {EVENT: [{"matcher": M, "hooks": [hook, ...]}]}}`: Claude Code, Gemini CLI, Codex) or
the hooks themselves (`{"hooks": {EVENT: [hook, ...]}}`: Cursor, VS Code, Copilot CLI, whose hook
names its command `bash` and its timeout `timeoutSec`). lore replaces its own hook in the list (found
by its command, wherever lore lives) and leaves the user's alone.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lore.installers import Change, Scope, shared
from lore.installers.checks import Found
from lore.installers.files import Edits


@dataclass(frozen=True)
class Hook:
    """One of lore's hooks: the client's event, and the entry lore writes for it."""

    event: str
    fields: Mapping[str, Any] = field(default_factory=lambda: {"type": "command"})  # before "command"
    timeout: int = 5  # in the client's unit
    matcher: str | None = None  # of its group (Claude-shaped files)
    run: str = "session-start"  # lore's hook: session-start | prompt | session-end

    def entry(self, command: str, keys: tuple[str, str] = ("command", "timeout")) -> dict[str, Any]:
        """The entry, its command and timeout under `keys` (the client's names for them)."""
        return {**self.fields, keys[0]: command, keys[1]: self.timeout}


def _ours(hook: Any, client: str, key: str = "command") -> bool:
    return isinstance(hook, dict) and shared.is_ours(hook.get(key), client)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _replace(events: dict[str, Any], event: str, kept: list[Any]) -> bool:
    """`kept` in place of the event's list (the event goes when nothing is kept); True when changed."""
    if kept == events[event]:
        return False
    if kept:
        events[event] = kept
    else:
        del events[event]
    return True


class Groups:
    """Claude-shaped: each event lists groups, each group lists hooks."""

    own_file = False

    def item(self, hook: Hook, command: str) -> dict[str, Any]:
        matcher = {"matcher": hook.matcher} if hook.matcher else {}
        return {**matcher, "hooks": [hook.entry(command)]}

    def kept(self, groups: Any, client: str) -> list[Any]:
        """The user's groups with lore's hook taken out (a group left empty is dropped)."""
        kept = []
        for group in _listed(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept.append(group)
                continue
            hooks = [h for h in group["hooks"] if not _ours(h, client)]
            if hooks:
                kept.append({**group, "hooks": hooks})
            elif not group["hooks"]:
                kept.append(group)
        return kept

    def drop(self, data: dict[str, Any], event: str, client: str) -> bool:
        """Take lore's hook out of `event` (and the emptied containers); True when anything changed."""
        events = data.get("hooks")
        if not isinstance(events, dict) or event not in events:
            return False
        if not _replace(events, event, self.kept(events[event], client)):
            return False
        if not events:
            data.pop("hooks")
        return True

    def found(self, groups: list[Any], client: str, what: str) -> list[Found]:
        return [
            Found(what, shared.command_lore(hook.get("command")), hook, group, (g, h))
            for g, group in enumerate(groups)
            for h, hook in enumerate(_listed(group.get("hooks")) if isinstance(group, dict) else [])
            if _ours(hook, client)
        ]


@dataclass(frozen=True)
class Entries:
    """Each event lists the hooks themselves."""

    own_file: bool = False  # the file is lore's own: removed once lore's hook was all it held
    keys: tuple[str, str] = ("command", "timeout")  # what the client calls a hook's command, timeout

    def item(self, hook: Hook, command: str) -> dict[str, Any]:
        return hook.entry(command, self.keys)

    def kept(self, entries: Any, client: str) -> list[Any]:
        return [e for e in _listed(entries) if not _ours(e, client, self.keys[0])]

    def drop(self, data: dict[str, Any], event: str, client: str) -> bool:
        events = data.get("hooks")
        if not (isinstance(events, dict) and isinstance(events.get(event), list)):
            return False
        return _replace(events, event, self.kept(events[event], client))

    def found(self, entries: list[Any], client: str, what: str) -> list[Found]:
        return [
            Found(what, shared.command_lore(e.get(self.keys[0])), e, None, (i, 0))
            for i, e in enumerate(entries)
            if _ours(e, client, self.keys[0])
        ]


GROUPS = Groups()


def same_json(before: Any, after: Any) -> bool:
    """Whether a file would hold the same JSON (so 5 and 5.0 differ)."""
    return json.dumps(before, sort_keys=True) == json.dumps(after, sort_keys=True)


#: Checks a parsed hook file is one lore can edit (raises ConfigError) and gives it the keys the
#: client requires: (data, path, lore).
Prepare = Callable[[dict[str, Any], Path, str], None]


def version_1(client: str, label: str, event: str) -> Prepare:
    """The `prepare` of a versioned hook file (Cursor's, Copilot CLI's): lore writes (and edits) its
    version 1 only; `label` names the client to a person, `event` is where its hook goes."""

    def prepare(hooks: dict[str, Any], path: Path, lore: str) -> None:
        if hooks.get("version", 1) != 1:
            from lore.core.errors import ConfigError

            raise ConfigError(
                f"{path} has version {hooks.get('version')!r}; lore writes {label}'s hooks version 1.",
                f"Add `{shared.hook_command(lore, client)}` to its {event} hooks yourself; "
                "lore changed nothing.",
            )
        hooks.setdefault("version", 1)

    return prepare


@dataclass(frozen=True)
class HookFile:
    path: Callable[[Scope], Path]
    hooks: tuple[Hook, ...]
    installed: str  # what install says: "SessionStart hook (5 s)"
    removed: str  # what uninstall says: "SessionStart hook"
    shape: Groups | Entries = GROUPS
    prepare: Prepare | None = None
    same: Callable[[Any, Any], bool] = same_json  # whether install changed nothing (before, after)

    def install(self, scope: Scope, lore: str, edits: Edits, client: str) -> Change:
        path = self.path(scope)
        data = edits.json(path)
        before = copy.deepcopy(data)
        if self.prepare is not None:
            self.prepare(data, path, lore)
        events = shared.table(data, "hooks", path)
        # Hosted: every hook asks the server (LORE_URL; LORE_TOKEN from the environment), or the one
        # `lore login` stored (read by the hook itself: nothing to write here).
        pinned = scope.server and not scope.logged_in
        prefix = f"LORE_URL={shlex.quote(scope.server)} " if pinned and scope.server else ""
        for hook in self.hooks:
            ours = self.shape.item(hook, prefix + shared.hook_command(lore, client, hook.run))
            events[hook.event] = [*self.shape.kept(events.get(hook.event, []), client), ours]
        changed = not self.same(before, data)
        if changed:
            edits.write_json(path, data)
        listed = before.get("hooks")
        old: dict[str, Any] = listed if isinstance(listed, dict) else {}
        had = any(self.shape.found(_listed(old.get(hook.event)), client, "") for hook in self.hooks)
        return Change(path, ("updated" if had else "added") if changed else "unchanged", self.installed)

    def uninstall(self, scope: Scope, edits: Edits, client: str) -> Change | None:
        path = self.path(scope)
        data = edits.json(path)
        dropped = [self.shape.drop(data, hook.event, client) for hook in self.hooks]
        if not any(dropped):
            return None
        if self.shape.own_file and data.get("hooks") == {} and set(data) <= {"hooks", "version"}:
            edits.delete(path)  # lore's own file, now empty (VS Code and Copilot CLI may share it)
        else:
            edits.write_json(path, data)
        return Change(path, "removed", self.removed)

    def found(self, scope: Scope, client: str, event: str | None = None) -> list[Found]:
        """lore's hooks for `event` (the first hook's by default)."""
        event = event or self.hooks[0].event
        events = Edits().json(self.path(scope)).get("hooks")
        listed = _listed(events.get(event)) if isinstance(events, dict) else []
        return self.shape.found(listed, client, f"{event} hook")
