"""What `lore doctor` says about one client: what it found of lore's there (`Seen`), and the rules a
client lists, in order, each giving the lines it has to say (none when all is well)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore.installers import Check, Scope, shared


@dataclass(frozen=True)
class Found:
    """One of lore's hooks as `lore doctor` finds it."""

    what: str  # "SessionStart hook", "plugin /path/lore.js"
    lore: str | None  # the executable it runs
    hook: Any  # the hook's entry, or the script's text
    group: Any = None  # its group (Claude-shaped files)
    place: tuple[int, int] = (0, 0)  # (group, hook) index in the event's list


@dataclass(frozen=True)
class Seen:
    name: str  # the client
    scope: Scope
    server: Any  # lore's server entry (None: there is none)
    server_path: Path
    server_lore: str | None  # the executable the entry runs
    hooks: list[Found]  # lore's (session-start) hooks
    hook_path: Path | None

    @property
    def where(self) -> str:
        return f"{self.name} ({self.scope.label})"

    def says(self, level: str, text: str) -> list[Check]:
        return [Check(level, f"{self.where}: {text}")]


Rule = Callable[[Seen], list[Check]]
HookRule = Callable[[Seen, Found], list[Check]]


def runs_lore(seen: Seen) -> list[Check]:
    """The server's command is an existing lore."""
    return [shared.check_lore(seen.server_lore, f"{seen.where} MCP server in {seen.server_path}")]


def hook_runs_lore(seen: Seen, found: Found) -> list[Check]:
    return [shared.check_lore(found.lore, f"{seen.where} {found.what}")]


def server_if(wrong: Callable[[Any], bool], level: str, text: str) -> Rule:
    """`text` (after "CLIENT (SCOPE): "; {path} is the server's file) when lore's entry is `wrong`."""
    return lambda seen: seen.says(level, text.format(path=seen.server_path)) if wrong(seen.server) else []


def no_hook(text: str) -> Rule:
    """`text`, in which {path} is the hook file, when lore's hook is not there."""
    return lambda seen: [] if seen.hooks else seen.says("WARN", text.format(path=seen.hook_path))


# What a session goes without when lore's session-end hook (the handoff) is missing.
NO_HANDOFF = "the next session here will not know what this one did"


def hook_missing(seen: Seen, event: str, without: str) -> list[Check]:
    """lore's `event` hook is not in the hook file: what the client goes `without`, and the fix."""
    return seen.says(
        "WARN", f"no {event} hook in {seen.hook_path}: {without} → run `lore install {seen.name}` again"
    )


def also_hook(found: Callable[[Scope, str, str], list[Found]], event: str, without: str) -> Rule:
    """lore's `event` hook beside its session-start one (`found` lists lore's hooks of an event):
    said missing only when the session-start one is there (no_hook speaks of that one)."""
    return lambda seen: (
        [] if not seen.hooks or found(seen.scope, seen.name, event) else hook_missing(seen, event, without)
    )


def each_hook(*rules: HookRule) -> Rule:
    return lambda seen: [check for found in seen.hooks for rule in rules for check in rule(seen, found)]


def first_run(hint: str) -> Rule:
    """When the hook last ran; `hint` says how to make it run when it never did."""
    return lambda seen: [shared.last_run(seen.name, hint, seen.scope.env)]


def end_run(hint: str) -> Rule:
    """When the session-end hook (the handoff) last ran, for a client that has one."""
    return lambda seen: [shared.last_run(seen.name, hint, seen.scope.env, "session-end")]
