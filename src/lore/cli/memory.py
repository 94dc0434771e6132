"""`lore facts list|history`, `lore handoff`, `lore session-start`: read memory from a terminal,
through the same use cases as the tools (lore.service)."""

from __future__ import annotations

from datetime import UTC, datetime

from lore.cli.context import runtime
from lore.core import injection, render
from lore.core.rows import Fact
from lore.service import handoffs, log, memory, tidy
from lore.service.session_start import session_start

# A person at a terminal reads the whole recall (the same facts, in the same order, as recall_facts
# gives an agent), not an agent's character budget.
TERMINAL_MAX_CHARS = 1_000_000


def handoff(workspace: str | None) -> int:
    """The last session's handoff here, in full (whatever its age; says when session starts no
    longer show it)."""
    with runtime() as rt:
        session = rt.command_session(workspace)
        found = handoffs.last_here(rt, session)
    if found.text is None:
        print(
            f"No handoff for {session.root} (space {session.space}) yet. An agent's session-end hook "
            "writes one when a turn or a session ends: `lore install CLIENT` wires it."
        )
        return 0
    print(found.text)
    return 0


def facts(action: str, item: str | None, workspace: str | None, usage: bool = False) -> int:
    with runtime() as rt:
        session = rt.command_session(workspace)
        if action == "history":
            for v in memory.fact_history(rt, session.readable, item or ""):
                print(_version_line(v))
            for m in tidy.merged_into(rt, session.readable, item or ""):
                print(
                    f"\n{m.item}, merged into it: {m.action.describe()} (undo: lore tidy undo {m.action.id})"
                )
                for old in m.versions:
                    if isinstance(old, Fact):
                        print(f"  {_version_line(old)}")
            return 0
        found = memory.recall(rt, session)
        print(found.text(TERMINAL_MAX_CHARS))
        if usage and found.facts:
            counts = log.usage(rt, session.readable, [f.id for f in found.facts])
            now = datetime.now(UTC)
            print("\nUsage (session starts since the record began; `lore log` lists them):")
            for fact in found.facts:
                print(f"  {fact.id:<8} {injection.usage_line(counts.get(fact.id), now)}")
    return 0


def _version_line(v: Fact) -> str:
    end = v.superseded_at.isoformat() if v.superseded_at else "current"
    return f"{v.recorded_at.isoformat()} → {end}  {render.fact_line(v)} ({v.source})"


def start(workspace: str | None, client: str) -> int:
    """`lore session-start`: the text an agent of `client` gets before its first prompt here."""
    with runtime() as rt:
        session = rt.command_session(workspace)
        started = session_start(rt, session, client, via="cli")
    print(started.text)
    return 0
