"""A session starts: the memory its agent reads before the first prompt, and the record of it.

The only place a session start is composed and recorded: the local hook (through psql), the hosted
hook's `/api/hooks/session-start`, `lore session-start` and the web UI call this. An empty space is an
outcome too (`nothing`): the agent reads one line saying lore is there, and it is recorded like the
rest. The record is written after the text is made; a record that cannot be written is handed back (`row`,
with `record` None) for the caller to keep in the spool, never at the cost of the text.

With the text comes what a caller needs to show it again without composing it (the local hook's
fast path, lore.hooks.quick): the memory stamp of the spaces read, whether the read saw no other
transaction in progress (`quiet`: only then may the text be kept), and until when it stays right
with no write at all (`valid_until`: a fact's validity starting or ending, the "how long ago" of
the last session changing, that session growing too old to show).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Unpack

from lore.core import injection, last_session, render
from lore.core.config import Config
from lore.core.errors import LoreError, StoreError
from lore.core.outcomes import SCHEMA_OLDER, Outcome, agent_line
from lore.core.session import SessionContext
from lore.core.session_start import Snapshot, compose, parse, request
from lore.db.calls import START_READ, TRIM, XMAX, Port
from lore.service.events import records


@dataclass(frozen=True)
class Started:
    text: str  # what the agent reads: the memory, or the one line of an empty space
    rendered: render.Rendered
    snapshot: Snapshot
    outcome: Outcome
    row: dict[str, Any]  # its record, as written (or to be kept in the spool when that failed)
    record: int | None = None  # the record's id (`lore log show ID`); None: not written
    failure: str | None = None  # why it could not be written
    stamp: int = 0  # the memory stamp of the spaces read (migration 0023)
    quiet: bool = False  # no other transaction was in progress when it was read
    valid_until: datetime | None = None  # when it would change with no write (None: not by time)

    @property
    def total(self) -> int:
        return self.snapshot.total


def session_start(
    port: Port,
    session: SessionContext,
    config: Config,
    client: str,
    *,
    check_paths: bool = True,
    **called: Unpack[records.Called],
) -> Started:
    """The text for `client` in `session`, and its record (`called`: how, for the record:
    records.Called); `check_paths`: facts naming files that are gone are left out (only where the
    session's paths are this machine's)."""
    started = records.began(called)
    read = port.call(START_READ, *request(session, config, client).arguments())
    if read is None or read.get("snapshot") is None:
        raise StoreError(SCHEMA_OLDER)
    snap = parse(read["snapshot"])
    out = compose(snap, session, config, client, check_paths=check_paths)
    budget = render.clamp_budget(config.session_start_max_chars, client)
    duration = records.took_ms(started)
    sid = (called.get("session_id") or "")[:200] or None
    via, event_key = called["via"], called.get("event_key")
    if out.text:
        outcome, text = Outcome("shown"), out.text
        row = injection.session_start_row(
            snap,
            out,
            session,
            client,
            via=via,
            session_id=sid,
            budget=budget,
            duration_ms=duration,
            event_key=event_key,
        )
    else:
        outcome = Outcome("nothing", f"no memory stored in space {session.space} yet")
        text = agent_line(outcome, space=session.space)
        row = injection.session_row(
            "session-start",
            outcome,
            session,
            client,
            via=via,
            session_id=sid,
            text=text,
            duration_ms=duration,
            event_key=event_key,
        )
    stamp, quiet = int(read.get("stamp") or 0), bool(read.get("quiet"))
    until = _valid_until(read.get("next_change"), snap, config)
    made, failure = records.write(port, row, config.retention_days)
    if made is None:
        return Started(text, out, snap, outcome, row, None, failure, stamp, False, until)
    try:
        port.call(TRIM, list(session.readable))
        quiet = quiet and port.call(XMAX) == read.get("xmax")  # no transaction ended since the read
    except LoreError as exc:  # the record is lost with the transaction: keep it in the spool
        return Started(text, out, snap, outcome, row, None, exc.message, stamp, False, until)
    return Started(text, out, snap, outcome, row, made, None, stamp, quiet, until)


def _valid_until(next_change: object, snap: Snapshot, config: Config) -> datetime | None:
    """The first moment the text would read otherwise with no write: a fact's valid time reached
    (the database's `next_change`), the last session's "how long ago" moving on, or it growing older
    than `session_start.handoff_max_age_hours`."""
    times = [datetime.fromisoformat(next_change)] if isinstance(next_change, str) else []
    last = snap.last
    if last is not None:
        then = last.handoff.updated_at
        times.append(last_session.ago_changes(then, last.now))
        times.append(then + timedelta(hours=max(0, config.handoff_max_age_hours)))
    return min(times) if times else None
