"""The record of every hook outcome, and the writes a spool kept: written through the same SQL
functions as when they happened (lore_injection_record, lore_handoff_record), so a replay is the write
it stands for, and a second one changes nothing (a record's `event_key`; a handoff's session and time).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from lore.core import spool
from lore.core.errors import LoreError
from lore.core.injection import outcome_row
from lore.db.calls import RECORD, Port


class Called(TypedDict):
    """How an event's use case was called, for its record: `via` hook | api | cli; the agent's
    `session_id`; `started`: when the caller began (time.monotonic; None: now), for the record's
    duration; `event_key`: the record's key (a record replayed from the spool is written once)."""

    via: str
    session_id: NotRequired[str | None]
    started: NotRequired[float | None]
    event_key: NotRequired[str | None]


def began(called: Called) -> float:
    """When the caller began (time.monotonic): `started`, or now."""
    started = called.get("started")
    return time.monotonic() if started is None else started


def took_ms(started: float) -> int:
    """Milliseconds since `started` (time.monotonic): a record's duration."""
    return int((time.monotonic() - started) * 1000)


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


__all__ = ["Called", "began", "deliver", "outcome_row", "record", "took_ms", "write"]


def write(port: Port, row: dict[str, Any], retention_days: int) -> tuple[int | None, str | None]:
    """(the record's id, None), or (None, why) when it could not be written: a record never costs
    the text it records (the caller keeps the row in the spool)."""
    try:
        return record(port, row, retention_days), None
    except LoreError as exc:
        return None, exc.message
