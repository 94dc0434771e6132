"""What a session's end captured on the developer's machine (lore.core.capture: the final message, the
working tree's changes, when the session began), as the session-end hook hands it to the use case:
in the same process (local), in a request to `/api/hooks/session-end` (hosted) or in the spool.
Bounded and redacted before it leaves the machine; checked again, as any input, where it arrives.
Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lore.core import capture
from lore.core.errors import InvalidInput

_FIX = "send what `lore hook session-end` sends (docs/design.md, Agent events)"


@dataclass(frozen=True)
class Ending:
    client: str
    session_id: str
    event: str
    message: str | None  # bounded and redacted (capture.bound_message)
    message_chars: int  # its length before it was cut
    changes: capture.Changes | None  # None: not a git repository, or git did not answer
    started_at: datetime | None
    at: datetime  # when the event happened

    def wire(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "session_id": self.session_id,
            "event": self.event,
            "message": self.message,
            "message_chars": self.message_chars,
            **capture.Changes.fields(self.changes),
            "started_at": self.started_at.isoformat() if self.started_at else None,
            "at": self.at.isoformat(),
        }


def from_wire(data: Mapping[str, Any], client: str) -> Ending:
    """An Ending sent by a hook (`client` as the caller named it), every field checked and bounded
    again: the message and each line redacted, sizes as lore.core.capture bounds them."""
    session_id = data.get("session_id")
    if not isinstance(session_id, str) or not capture.clean(session_id).strip():
        raise InvalidInput("the session end names no session (session_id)", _FIX)
    event = data.get("event") or "end"
    message = data.get("message")
    if not isinstance(event, str) or (message is not None and not isinstance(message, str)):
        raise InvalidInput("the session end's event and message must be strings", _FIX)
    text, chars = capture.bound_message(message)
    given_chars = data.get("message_chars")
    if isinstance(given_chars, int) and not isinstance(given_chars, bool) and given_chars >= chars:
        chars = min(given_chars, 10**9)
    return Ending(
        client=client,
        session_id=capture.clean(session_id)[:200],
        event=capture.clean(event)[:64] or "end",
        message=text,
        message_chars=chars if text else 0,
        changes=_changes(data),
        started_at=capture.parse_time(data.get("started_at")),
        at=capture.parse_time(data.get("at")) or datetime.now(UTC),
    )


def _changes(data: Mapping[str, Any]) -> capture.Changes | None:
    lines = data.get("changes")
    if lines is None:
        return None
    if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
        raise InvalidInput("the session end's changes must be a list of strings (or null)", _FIX)
    kept, _ = capture.bound_status("\n".join(lines))
    count = data.get("changed")
    counted = count if isinstance(count, int) and not isinstance(count, bool) else len(kept)
    diffstat = data.get("diffstat")
    if diffstat is not None and not isinstance(diffstat, str):
        raise InvalidInput("the session end's diffstat must be a string (or null)", _FIX)
    return capture.Changes(kept, max(len(kept), min(counted, 10**9)), capture.bound_diffstat(diffstat or ""))
