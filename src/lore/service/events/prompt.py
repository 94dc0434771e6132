"""A prompt is about to be sent: what arrived for the session's space since its previous prompt
(unread messages, tasks new in the inbox), shown once per session, usually nothing.

The only place the per-prompt inbox is read, composed and recorded: the local hook (through psql)
and the hosted hook's `/api/hooks/prompt` call this. Which ids a session has seen is the caller's to
keep (the hook keeps them per session on its machine): `seen` in, the new marks out. It only looks:
messages stay unread until read_messages reads them. Nothing new is no record (every prompt would
make one); what was shown is recorded like a session start.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Unpack

from lore.core import inbox, injection, measure
from lore.core.config import Config
from lore.core.errors import StoreError
from lore.core.outcomes import SCHEMA_OLDER, Outcome
from lore.core.rows import Message, Task, from_json
from lore.core.session import SessionContext
from lore.db.calls import INBOX, Port
from lore.service.events import records


@dataclass(frozen=True)
class Seen:
    """The newest message and task ids a session has been shown (0: none yet)."""

    message: int = 0
    task: int = 0


@dataclass(frozen=True)
class Arrived:
    text: str  # '' when nothing arrived
    seen: Seen  # what the session has seen once this is shown
    messages: int  # how many unread messages arrived (shown or not)
    tasks: int
    outcome: Outcome
    row: dict[str, Any] | None = None  # its record (None: nothing arrived, nothing to record)
    record: int | None = None  # the record's id; None with a row: not written (spool it)
    failure: str | None = None


def prompt(
    port: Port,
    session: SessionContext,
    config: Config,
    client: str,
    seen: Seen,
    **called: Unpack[records.Called],
) -> Arrived:
    started = records.began(called)
    found = port.call(INBOX, session.space, seen.message, seen.task, inbox.PROMPT_MAX_ITEMS)
    if found is None:
        raise StoreError(SCHEMA_OLDER)
    messages = [from_json(Message, m) for m in found["messages"]]
    tasks = [from_json(Task, t) for t in found["tasks"]]
    marks = Seen(max(seen.message, int(found["last_message"])), max(seen.task, int(found["last_task"])))
    counted_messages, counted_tasks = int(found["message_count"]), int(found["task_count"])
    text = inbox.prompt_text(
        session.space,
        messages,
        tasks,
        more_messages=counted_messages - len(messages),
        more_tasks=counted_tasks - len(tasks),
    )
    if not text:
        return Arrived("", marks, 0, 0, Outcome("nothing"))
    outcome = Outcome("shown")
    row = injection.session_row(
        "prompt",
        outcome,
        session,
        client,
        via=called["via"],
        session_id=called.get("session_id"),
        text=text,
        duration_ms=records.took_ms(started),
        event_key=called.get("event_key"),
    )
    row["shown"] = [m.id for m in messages] + [t.id for t in tasks]
    row["chars"] = measure.size(text)
    made, failure = records.write(port, row, config.retention_days)
    return Arrived(text, marks, counted_messages, counted_tasks, outcome, row, made, failure)
