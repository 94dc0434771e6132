"""The record of what lore told an agent (`injections`, migrations 0014 and 0018): one row per outcome
of a hook (memory shown, nothing to show, unavailable and why, ...: lore.core.outcomes), built here
for every caller of the agent events (lore.service.events) and read back by `lore log` and the web
UI. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lore.core import last_session, measure, render
from lore.core.outcomes import Outcome
from lore.core.session import SessionContext
from lore.core.session_start import Snapshot

MAX_TEXT = 10_000
EVENTS = ("session-start", "prompt", "session-end")  # a record's kind: the hook event it is of
# In the record's `cut`, a fact folded into a shown one as its near duplicate is `f_4>f_8` (folded
# into f_8); a bare id was cut by the budget (or left out as stale). The column stays one list of
# text (migration 0014); lore_usage counts only the bare ids as cut.
FOLDED = ">"


@dataclass(frozen=True)
class Injection:
    """One row of `injections`."""

    id: int
    at: datetime
    kind: str  # session-start | prompt | session-end
    via: str  # hook | api | cli
    client: str
    session_id: str | None
    workspace: str
    space: str | None  # None: no space could be chosen (a config error, a tie)
    readable: list[str]
    shown: list[str]  # public ids, in the order shown
    cut: list[str]  # facts read but left out by the budget
    handoff: int | None
    instructions: list[str]
    chars: int
    budget: int
    duration_ms: int
    text: str
    outcome: str = "shown"  # lore.core.outcomes.KINDS
    detail: str | None = None  # why, when it is not `shown`

    @property
    def budget_cut(self) -> list[str]:
        """The facts read but left out by the budget (or as stale), not folded."""
        return [x for x in self.cut if FOLDED not in x]

    @property
    def folded(self) -> list[tuple[str, str]]:
        """(a fact folded as similar, the shown fact it was folded into)."""
        return [(a, b) for a, _, b in (x.partition(FOLDED) for x in self.cut if FOLDED in x)]


def outcome_row(
    kind: str,
    outcome: Outcome,
    *,
    client: str,
    workspace: str,
    via: str = "hook",
    session_id: str | None = None,
    space: str | None = None,
    readable: Sequence[str] = (),
    text: str = "",
    duration_ms: int = 0,
    event_key: str | None = None,
    at: str | None = None,
) -> dict[str, Any]:
    """The record of an outcome that showed no memory (or the inbox), as `lore_injection_record`
    takes it: `kind` is the hook's event (another name counts as a session start); `at`: when it
    happened (ISO 8601; None: when written), for a record kept in the spool."""
    return {
        "kind": kind if kind in EVENTS else "session-start",
        "via": via,
        "client": client[:200],
        "session_id": session_id[:200] if session_id else None,
        "workspace": workspace[:4096],
        "space": space,
        "readable": list(readable),
        "shown": [],
        "cut": [],
        "handoff": None,
        "instructions": [],
        "chars": measure.size(text),
        "budget": 0,
        "duration_ms": duration_ms,
        "text": text[:MAX_TEXT],
        "outcome": outcome.kind,
        "detail": outcome.why[:1000] or None,
        "event_key": event_key,
        "at": at,
    }


def session_row(
    kind: str,
    outcome: Outcome,
    session: SessionContext,
    client: str,
    *,
    via: str,
    session_id: str | None,
    text: str,
    duration_ms: int,
    event_key: str | None,
) -> dict[str, Any]:
    """`outcome_row` of a session whose space is known (its workspace, space and what it reads)."""
    return outcome_row(
        kind,
        outcome,
        client=client,
        workspace=str(session.signal.path),
        via=via,
        session_id=session_id,
        space=session.space,
        readable=session.readable,
        text=text,
        duration_ms=duration_ms,
        event_key=event_key,
    )


def session_start_row(
    snapshot: Snapshot,
    out: render.Rendered,
    session: SessionContext,
    client: str,
    *,
    via: str,
    session_id: str | None,
    budget: int,
    duration_ms: int,
    event_key: str | None = None,
) -> dict[str, Any]:
    """The record of one session start that showed memory, as `lore_injection_record` takes it."""
    shown = list(out.shown_ids)  # in order; copies and stale facts were never lines of their own
    into = dict(out.folded)
    seen = set(shown)
    cut = [
        f"{f.id}{FOLDED}{into[f.id]}" if f.id in into else f.id for f in snapshot.facts if f.id not in seen
    ]
    last = snapshot.last
    return {
        "kind": "session-start",
        "via": via,
        "client": client,
        "session_id": session_id,
        "workspace": str(session.signal.path),
        "space": session.space,
        "readable": list(session.readable),
        "shown": shown,
        "cut": cut,
        "handoff": last.handoff.id if last is not None and out.handoff_chars else None,
        "instructions": [s.note_id for s in snapshot.instructions[: out.instructions_shown]],
        "chars": measure.size(out.text),
        "budget": budget,
        "duration_ms": duration_ms,
        "text": out.text[:MAX_TEXT],
        "outcome": "shown",
        "detail": None,
        "event_key": event_key,
    }


@dataclass(frozen=True)
class Usage:
    item: str
    shown: int
    cut: int
    returned: int
    irrelevant: int
    last_shown: datetime | None
    last_returned: datetime | None


def usage_line(used: Usage | None, now: datetime) -> str:
    """`shown in 14 sessions, last 2 h ago, cut 3 times`, or that it was never shown."""
    if used is None or not (used.shown or used.cut or used.returned):
        return "never shown nor returned yet"
    parts = [f"shown in {render.counted(used.shown, 'session')}"]
    if used.last_shown is not None:
        parts[-1] += f", last {last_session.ago(used.last_shown, now)}"
    if used.cut:
        parts.append(f"cut {used.cut} time{'s' if used.cut != 1 else ''}")
    if used.returned:
        parts.append(f"returned by search {used.returned} time{'s' if used.returned != 1 else ''}")
    if used.irrelevant:
        parts.append(f"marked irrelevant {used.irrelevant} time{'s' if used.irrelevant != 1 else ''}")
    return ", ".join(parts)
