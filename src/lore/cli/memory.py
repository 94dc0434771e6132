"""`lore facts list|history`, `lore handoff`, `lore session-start`: read memory from a terminal,
through the same use cases as the tools, here or on the server this machine uses (lore.cli.gateway)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lore.cli.context import gateway
from lore.core import injection, render
from lore.core.injection import Usage
from lore.core.rows import Fact, from_json

# A person at a terminal reads the whole recall (the same facts, in the same order, as recall_facts
# gives an agent), not an agent's character budget.
TERMINAL_MAX_CHARS = 1_000_000


def handoff(workspace: str | None) -> int:
    """The last session's handoff here, in full (whatever its age; says when session starts no
    longer show it)."""
    with gateway() as gw:
        found = gw.handoff(workspace)
    if found.get("text") is None:
        print(
            f"No handoff for {found['root']} (space {found['space']}) yet. An agent's session-end hook "
            "writes one when a turn or a session ends: `lore install CLIENT` wires it."
        )
        return 0
    print(found["text"])
    return 0


def facts(action: str, item: str | None, workspace: str | None, usage: bool = False) -> int:
    with gateway() as gw:
        if action == "history":
            return _history(gw.fact_history(workspace, item or ""))
        found = gw.facts(workspace, usage=usage)
    listed = [from_json(Fact, f) for f in found["facts"]]
    text = render.recall(
        listed,
        space=found["space"],
        max_chars=TERMINAL_MAX_CHARS,
        total=found["total"],
        header=found.get("header"),
    ).text
    print(text)
    if usage and listed:
        counts = {k: from_json(Usage, v) for k, v in (found.get("usage") or {}).items()}
        now = datetime.now(UTC)
        print("\nUsage (session starts since the record began; `lore log` lists them):")
        for fact in listed:
            print(f"  {fact.id:<8} {injection.usage_line(counts.get(fact.id), now)}")
    return 0


def _history(found: dict[str, Any]) -> int:
    for v in found["versions"]:
        print(_version_line(from_json(Fact, v)))
    for m in found.get("merged") or []:
        print(
            f"\n{m['item']}, merged into it: {m['action']['text']} (undo: lore tidy undo {m['action']['id']})"
        )
        for old in m["versions"]:
            if "statement" in old:
                print(f"  {_version_line(from_json(Fact, old))}")
    return 0


def _version_line(v: Fact) -> str:
    end = v.superseded_at.isoformat() if v.superseded_at else "current"
    return f"{v.recorded_at.isoformat()} → {end}  {render.fact_line(v)} ({v.source})"


def start(workspace: str | None, client: str) -> int:
    """`lore session-start`: the text an agent of `client` gets before its first prompt here."""
    with gateway() as gw:
        started = gw.session_start(workspace, client)
    print(started["text"])
    return 0
