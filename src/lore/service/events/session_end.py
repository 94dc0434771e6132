"""A session ends (or a turn does): its handoff, stored for the next session of any agent there.

The only place a handoff is written: the local hook (through psql), the hosted hook's
`/api/hooks/session-end` and a spool replayed call this. What the session left was captured on the
developer's machine (lore.core.ending); the space and "here" (the root) come from the session, as
for every write, never from the capture.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from lore.core import capture
from lore.core.ending import Ending
from lore.core.rows import Handoff, from_json
from lore.core.session import SessionContext
from lore.db.calls import HANDOFF, Port


def handoff_of(ending: Ending, session: SessionContext) -> capture.Handoff:
    """The handoff row to write: `ending` in `session`'s space, at its root."""
    said = {f.name: getattr(ending, f.name) for f in fields(ending)}  # every field, as captured
    root, workspace = str(session.root), str(session.signal.path)
    return capture.Handoff(
        space=session.space, root=root, workspace=workspace, workspace_name=session.workspace_name, **said
    )


def session_end(port: Port, session: SessionContext, ending: Ending) -> Handoff:
    """Write (or update) the handoff of `ending`'s session; an event older than the one stored
    changes nothing (a spool replayed late)."""
    return store(port, handoff_of(ending, session).payload())


def store(port: Port, payload: dict[str, Any]) -> Handoff:
    """Write one handoff payload (capture.Handoff.payload): the session end, or its spooled copy."""
    return from_json(Handoff, port.call(HANDOFF, payload))
