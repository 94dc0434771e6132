"""Waiting for replies: every `send_message(wait_seconds=…)` of a process shares ONE LISTEN
connection (lore.listen), which wakes the waiters of the space a message reached; each waiter then
claims its reply with a pooled connection, briefly. Before, each waiting call held a connection of
its own for the whole wait, so 220 waiting calls of one user ran PostgreSQL out of connections.

Bounded twice: a signed-in user may have `per_user` calls waiting at once, the process `total`
(LORE_USER_MAX_WAITS, LORE_MAX_WAITS); past that a call is refused with the reason, nothing sent.

The backstop: while anyone waits, the same task looks at the messages table every `poll_seconds`
(one query for the whole process: which spaces got a message since the last look) and wakes those
waiters, so a notification that never came (a pooler in between, a dropped connection) delays a
reply by that long at most and never loses it. Without a LISTEN URL (a transaction pooler and no
`LORE_LISTEN_URL`, or `LORE_LISTEN_URL=off`) that poll is all there is.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import psycopg
from anyio.abc import TaskGroup

from lore.core.errors import DatabaseError, LoreError, Refused
from lore.store import messages
from lore.store.listen import CHANNEL_MESSAGES, RECONNECTED, Listener

log = logging.getLogger("lore.store.replies")
START_TIMEOUT = 10.0


@dataclass
class _Waiter:
    space: str
    woken: anyio.Event = field(default_factory=anyio.Event)


Run = Callable[[Callable[[psycopg.Connection], Any]], Awaitable[Any]]


@dataclass
class Replies:
    # Where to LISTEN (called when the listener starts: the pool opens first); None: poll only.
    url: Callable[[], str | None]
    run: Run  # a function on a pooled connection, off the event loop (Runtime.run): the poll's
    per_user: int = 16
    total: int = 1000
    poll_seconds: float = 5.0  # beside LISTEN: the backstop
    poll_alone_seconds: float = 1.0  # without LISTEN: all there is
    # Told what happened, for the metrics: "waiting" / "waited" (a caller began / ended its wait),
    # "notified", "polled" (a poll woke someone), "lost", "reconnected", and "listening" /
    # "polling" when the task starts.
    on_event: Callable[[str], None] | None = None
    _group: TaskGroup | None = None
    _ready: anyio.Event | None = None
    _failed: BaseException | None = None
    _waiters: list[_Waiter] = field(default_factory=list)
    _users: Counter[str] = field(default_factory=Counter)

    def attach(self, group: TaskGroup) -> None:
        """The task group the listener runs in (the server's lifespan)."""
        self._group = group

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    @asynccontextmanager
    async def expecting(
        self, space: str, user: str = ""
    ) -> AsyncIterator[Callable[[float], Awaitable[bool]]]:
        """Listen for messages to `space` for the block (enter it BEFORE sending: a reply cannot slip
        in between). Yields `wait(seconds)`: True when a message reached `space` (or the connection
        came back: look again), False when the time ran out."""
        if len(self._waiters) >= self.total:
            raise Refused(
                f"This server already has {self.total} calls waiting for a reply.",
                "Send without wait_seconds and call read_messages later.",
            )
        if user and self._users[user] >= self.per_user:
            raise Refused(
                f"You already have {self.per_user} calls waiting for a reply.",
                "Send without wait_seconds (read_messages shows the reply later), or wait for one to end.",
            )
        await self._start()
        waiter = _Waiter(space)
        self._waiters.append(waiter)
        self._users[user] += 1
        self._tell("waiting")

        async def wait(seconds: float) -> bool:
            with anyio.move_on_after(max(0.0, seconds)):
                await waiter.woken.wait()
            woke = waiter.woken.is_set()
            waiter.woken = anyio.Event()  # armed again before the caller looks at the table
            return woke

        try:
            yield wait
        finally:
            self._tell("waited")
            self._waiters.remove(waiter)
            self._users[user] -= 1
            if self._users[user] <= 0:
                del self._users[user]

    async def _start(self) -> None:
        if self._ready is None:
            if self._group is None:
                raise DatabaseError(
                    "Waiting for replies is not available here.", "Send without wait_seconds."
                )
            self._ready, self._failed = anyio.Event(), None
            self._group.start_soon(self._run, self._ready)
        ready = self._ready
        with anyio.move_on_after(START_TIMEOUT):
            await ready.wait()
        if self._failed is not None or not ready.is_set():
            self._ready = None  # the next waiter tries again
            raise DatabaseError(
                "Cannot listen for replies right now.",
                "Send without wait_seconds and call read_messages later.",
            )

    async def _run(self, ready: anyio.Event) -> None:
        try:
            url = self.url()
            last = await self.run(messages.latest_id)
            if url is None:
                self._tell("polling")
                ready.set()
                while True:
                    await anyio.sleep(self.poll_alone_seconds)
                    last = await self._poll(last)
            async with Listener(url, [CHANNEL_MESSAGES], on_state=self._tell) as listener:
                self._tell("listening")
                ready.set()
                while True:
                    events = await listener.wait(self.poll_seconds)
                    if not events:  # the backstop: nothing heard for a while, look anyway
                        last = await self._poll(last)
                        continue
                    if any(e is RECONNECTED for e in events):
                        reached = {w.space for w in self._waiters}  # missed notifications: all look
                    else:
                        reached = {str(e.payload.get("to_space")) for e in events}
                        self._tell("notified")
                    self._wake(reached)
        except Exception as exc:  # the listener could not start, or died: waiters are told
            log.warning("the reply listener stopped: %s", exc)
            self._failed = exc
            ready.set()
            for waiter in self._waiters:
                waiter.woken.set()
        finally:
            if self._ready is ready:
                self._ready = None

    async def _poll(self, last: int) -> int:
        """Wake the waiters of every space a message reached since message `last`; the new last."""
        if not self._waiters:
            return last
        try:
            newest, spaces = await self.run(lambda conn: messages.arrived_since(conn, last))
        except (LoreError, psycopg.Error) as exc:  # the database is away: the next poll tries again
            log.info("reply poll failed: %s", exc)
            return last
        if spaces and self._wake(set(spaces)):
            self._tell("polled")
        return int(newest)

    def _wake(self, spaces: set[str]) -> bool:
        woke = False
        for waiter in self._waiters:
            if waiter.space in spaces:
                waiter.woken.set()
                woke = True
        return woke

    def _tell(self, event: str) -> None:
        if self.on_event is not None:
            self.on_event(event)
