"""The record of every hook outcome, and the writes a spool kept: written through the same SQL
functions as when they happened (lore_injection_record, lore_handoff_record), so a replay is the write
it stands for, and a second one changes nothing (a record's `event_key`; a handoff's session and time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lore.core import injection, spool
from lore.core.outcomes import Outcome
from lore.db.calls import RECORD, Port


def record(port: Port, row: Mapping[str, Any], retention_days: int) -> int:
    """Write one record (lore.core.injection's rows); returns its id (the first one's, for a key
    written before)."""
    return int(port.call(RECORD, dict(row), retention_days))


def deliver(port: Port, entry: spool.Entry, retention_days: int) -> None:
    """Write one spooled write; raises when it cannot (it stays in the spool)."""
    if entry.kind == "record":
        record(port, entry.payload, retention_days)
    elif entry.kind == "handoff":
        from lore.service.events import session_end  # (its capture side is not every hook's to import)

        session_end.store(port, entry.payload)
    else:
        raise ValueError(f"a spooled write of an unknown kind {entry.kind!r}")


def outcome_row(
    event: str,
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
    """The record of an outcome that showed no memory (a failure, a run its agent killed), for
    `record` now or for the spool."""
    kind = event if event in ("session-start", "prompt", "session-end") else "session-start"
    return injection.outcome_row(
        kind,
        outcome,
        via=via,
        client=client,
        workspace=workspace,
        session_id=session_id,
        space=space,
        readable=readable,
        text=text,
        duration_ms=duration_ms,
        event_key=event_key,
        at=at,
    )
