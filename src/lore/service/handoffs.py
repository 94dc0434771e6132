"""What agents' sessions left behind (the session-end hook writes it, lore.hooks.session_end): the
last handoff here in full (`lore handoff`), and a space's timeline of sessions (the web UI)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg

from lore.core import ids, last_session
from lore.core.rows import Handoff
from lore.core.session import SessionContext
from lore.service.runtime import Runtime
from lore.store import handoffs


@dataclass(frozen=True)
class Found:
    handoff: Handoff | None
    text: str | None  # the handoff in full, for a person (last_session.handoff_text)


def last_here(rt: Runtime, session: SessionContext) -> Found:
    """The last session's handoff at the session's root, whatever its age (the text says when
    session starts no longer show it)."""
    hours = rt.config().handoff_max_age_hours

    def read(conn: psycopg.Connection) -> Found:
        found = handoffs.last(conn, session.space, str(session.root), None)
        if found is None:
            return Found(None, None)
        tasks = handoffs.task_titles(conn, found.space, found.tasks)
        now = handoffs.now(conn)
        return Found(found, last_session.handoff_text(found, now, tasks, max_age_hours=hours))

    return rt.transact(read)


def timeline(rt: Runtime, spaces: Sequence[str], *, limit: int = 200) -> list[Handoff]:
    """Handoffs of `spaces`, the most recently updated first."""
    return rt.transact(lambda c: handoffs.recent(c, spaces, limit=limit))


def public_ids(rt: Runtime, spaces: Sequence[str], rows: Sequence[int | None]) -> dict[int, str]:
    """The id a person and an agent see for each handoff of `rows` (row ids, as an injection record
    keeps them): its note's, `n_<note>`, the one search, session starts and `lore handoff` show."""
    wanted = sorted({row for row in rows if row is not None})
    if not wanted:
        return {}
    found = rt.transact(lambda c: handoffs.notes_of(c, spaces, wanted))
    return {row: ids.note(note) for row, note in found.items()}
