"""Tasks and messages between spaces: file a task, move it, send a message (and wait for the reply),
read what arrived, follow what arrives (`lore listen`). The MCP tools, the web UI and the `lore
tasks|messages|listen` commands all call these.

The only use cases with a target space (`to`): they write into another space's inbox, and only where
its `accepts_from` lists the caller's space (lore.core.inbox.check_target, in the store). None of
them touches the embedder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial

import anyio
import psycopg

from lore.core import inbox, validate
from lore.core.config import Config
from lore.core.errors import DatabaseError
from lore.core.rows import Message, Task
from lore.core.session import Who
from lore.service.runtime import Runtime, poll_seconds
from lore.store import messages, tasks
from lore.store.listen import CHANNEL_MESSAGES, CHANNEL_TASKS, CHANNELS, RECONNECTED, Event, Listener

# A target is a space id, `<user>/<space>` in sign-in mode: 64 characters each side of the slash.
MAX_TARGET = 129
READ_MAX = 10  # messages one read_messages (or `lore messages read`) claims
OPEN_TASKS_SHOWN = 50
PERSON_LISTED = 10_000  # the tasks a person's list shows (`lore tasks`, `GET /api/tasks`)
PERSON_MESSAGES = 30  # the latest messages a person's list shows (`lore messages`, `GET /api/messages`)


def target(config: Config, space: str, value: object) -> str:
    """The target space a caller in `space` names. In sign-in mode ids are `<user>/<space>` and a bare
    id means the caller's own user's (lore.store.userconfig): `to="work"` is `alice/work` for alice;
    `bob/work` names bob's, a target only while both configs name each other (lore.core.links)."""
    named = validate.text(value, "to", max_chars=MAX_TARGET)
    assert named is not None
    user, sep, _ = space.rpartition("/")
    if sep and "/" not in named:
        return f"{user}/{named}"
    return named


def file_task(
    rt: Runtime, who: Who, title: object, body: object, *, to: object = None, allow_secret: bool = False
) -> Task:
    """A task in the caller's backlog (`todo`), or with `to` in that space's inbox."""
    head = validate.text(title, "title", max_chars=validate.MAX_TITLE)
    text = validate.body(body)
    config = rt.config()
    where = target(config, who.space, to) if to is not None else who.space
    return rt.transact(
        lambda c: tasks.file(c, config, who.origin, where, head, text, allow_secret=allow_secret)
    )


def update_task(
    rt: Runtime, who: Who, task_id: object, status: object, note: object = None
) -> tuple[str, Task]:
    """Set a task's status (of the caller's own space); returns (previous status, task)."""
    lineage, new = inbox.parse_task_id(task_id), inbox.parse_status(status)
    why = validate.optional(note, "note", validate.MAX_REASON)
    return rt.transact(lambda c: tasks.update(c, who.origin, who.readable, lineage, new, why))


def task(rt: Runtime, readable: Sequence[str], task_id: object) -> tuple[Task, list[tasks.Event]]:
    """One task and its history of status changes."""
    lineage = inbox.parse_task_id(task_id)
    return rt.transact(lambda c: (tasks.get(c, readable, lineage), tasks.history(c, readable, lineage)))


def tasks_of(
    rt: Runtime, space: str, statuses: Sequence[str] = inbox.OPEN_STATUSES, *, limit: int = 300
) -> tuple[list[Task], int]:
    """A space's tasks with those statuses (in that order, newest first), and how many there are."""
    return rt.transact(lambda c: tasks.listing(c, space, statuses, limit=limit))


@dataclass(frozen=True)
class Sent:
    message: Message
    waited: float  # seconds waited for the reply (0: did not wait)
    reply: Message | None


async def send_message(
    rt: Runtime,
    who: Who,
    to: object,
    body: object,
    *,
    reply_to: object = None,
    wait_seconds: object = 0,
    session_key: str | None = None,
    reader: str = "",
    allow_secret: bool = False,
    on_sent: Callable[[Message], None] | None = None,
) -> Sent:
    """Send a message; with `wait_seconds`, wait that long for the reply (on the process's one LISTEN
    connection, lore.store.replies: listening before sending, so no reply can slip in between)."""
    text = validate.text(body, "body", max_chars=inbox.MAX_MESSAGE)
    assert text is not None
    answered = inbox.parse_message_id(reply_to) if reply_to is not None else None
    wait = inbox.wait_seconds(wait_seconds)
    config = rt.config()
    where = target(config, who.space, to)

    def send(conn: psycopg.Connection) -> Message:
        return messages.send(
            conn,
            config,
            who.origin,
            where,
            text,
            reply_to=answered,
            session=session_key,
            allow_secret=allow_secret,
        )

    if not wait:
        return Sent(await rt.run(send), 0.0, None)
    async with rt.replies.expecting(who.space, rt.user() or "") as woken:
        sent = await rt.run(send)
        if on_sent is not None:
            on_sent(sent)

        async def claim() -> Message | None:
            return await rt.run(lambda c: messages.claim_reply_now(c, who.space, sent.num, reader))

        reply = await messages.await_reply(claim, woken, wait)
    return Sent(sent, wait, reply)


@dataclass(frozen=True)
class Inbox:
    """What read_messages answers: the messages it claimed (now read), how many stay unread, and the
    space's open tasks (the first OPEN_TASKS_SHOWN) with how many there are."""

    messages: list[Message]
    unread_left: int
    tasks: list[Task]
    open_tasks: int


def read_messages(rt: Runtime, who: Who, reader: str, *, session_key: str | None = None) -> Inbox:
    def read(conn: psycopg.Connection) -> Inbox:
        got, left = messages.read(conn, who.space, reader, session=session_key, limit=READ_MAX)
        open_tasks, total = tasks.listing(conn, who.space, limit=OPEN_TASKS_SHOWN)
        return Inbox(got, left, open_tasks, total)

    return rt.transact(read)


def person_tasks(rt: Runtime, space: str, *, every: bool) -> tuple[list[Task], int]:
    """A person's list of a space's tasks (`lore tasks [--all]`, `GET /api/tasks[?all=1]`): the open
    ones, or every one; and how many there are."""
    return tasks_of(rt, space, inbox.STATUSES if every else inbox.OPEN_STATUSES, limit=PERSON_LISTED)


def recent_messages(rt: Runtime, space: str, *, limit: int = PERSON_MESSAGES) -> list[Message]:
    """The latest messages to or from a space, read or not, oldest first (nothing is marked read)."""
    return rt.transact(lambda c: messages.recent(c, space, limit=limit))


async def arrivals(
    rt: Runtime,
    space: str,
    *,
    on_state: Callable[[str], None] | None = None,
    on_ready: Callable[[], None] | None = None,
) -> AsyncIterator[Message | Task]:
    """Messages and inbox tasks to `space` as they arrive (`lore listen`), from now on: woken by
    LISTEN where there is a LISTEN URL (lore.core.pooling), and in any case every
    LORE_POLL_SECONDS (the backstop: a notification sent while disconnected, or never heard through
    a pooler, delays an arrival by that long at most; a row is never lost)."""
    url = await anyio.to_thread.run_sync(rt.listen_url)
    every = poll_seconds(rt.env, listening=url is not None)
    after_message = await rt.run(messages.latest_id)
    after_task = await rt.run(tasks.latest_lineage)
    async with _signals(url, on_state) as wait:
        if on_ready is not None:
            on_ready()
        while True:
            events = await wait(every)
            if events is not None and not any(_concerns(event, space) for event in events):
                continue
            try:
                while True:
                    fresh = await rt.run(partial(messages.since_now, space=space, after=after_message))
                    for message in fresh:
                        after_message = max(after_message, message.num)
                        yield message
                    if len(fresh) < 50:
                        break
                arrived = await rt.run(partial(tasks.inbox_since_now, space=space, after=after_task))
                for arrived_task in arrived:
                    after_task = max(after_task, arrived_task.lineage)
                    yield arrived_task
            except DatabaseError:
                continue  # the database is away: the next poll (or reconnection) looks again


@asynccontextmanager
async def _signals(
    url: str | None, on_state: Callable[[str], None] | None
) -> AsyncIterator[Callable[[float], Awaitable[list[Event] | None]]]:
    """`wait(seconds)`: the notifications heard (a list), or None when `seconds` passed without any
    (look anyway). Without a LISTEN URL, only the time passes."""
    if url is None:

        async def sleep(seconds: float) -> list[Event] | None:
            await anyio.sleep(seconds)
            return None

        yield sleep
        return
    async with Listener(url, CHANNELS, on_state=on_state) as listener:

        async def heard(seconds: float) -> list[Event] | None:
            return await listener.wait(seconds) or None

        yield heard


def _concerns(event: Event, space: str) -> bool:
    if event is RECONNECTED:
        return True
    if event.channel == CHANNEL_MESSAGES:
        return event.payload.get("to_space") == space
    return event.channel == CHANNEL_TASKS and event.payload.get("space") == space
