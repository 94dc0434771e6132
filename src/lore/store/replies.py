"""Waiting for replies: every `send_message(wait_seconds=…)` of a process shares ONE LISTEN
connection (lore.listen), which wakes the waiters of the space a message reached; each waiter then
claims its reply with a pooled connection, briefly. Before, each waiting call held a connection of
its own for the whole wait, so 220 waiting calls of one user ran PostgreSQL out of connections.

Bounded twice: a signed-in user may have `per_user` calls waiting at once, the process `total`
(LORE_USER_MAX_WAITS, LORE_MAX_WAITS); past that a call is refused with the reason, nothing sent.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup

from lore.core.errors import DatabaseError, Refused
from lore.store.listen import CHANNEL_MESSAGES, RECONNECTED, Listener

log = logging.getLogger("lore.store.replies")
START_TIMEOUT = 10.0


@dataclass
class _Waiter:
    space: str
    woken: anyio.Event = field(default_factory=anyio.Event)


@dataclass
class Replies:
    url: Callable[[], str]  # the database URL (called when the listener starts: the pool opens first)
    per_user: int = 16
    total: int = 1000
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

        async def wait(seconds: float) -> bool:
            with anyio.move_on_after(max(0.0, seconds)):
                await waiter.woken.wait()
            woke = waiter.woken.is_set()
            waiter.woken = anyio.Event()  # armed again before the caller looks at the table
            return woke

        try:
            yield wait
        finally:
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
            async with Listener(self.url(), [CHANNEL_MESSAGES]) as listener:
                ready.set()
                while True:
                    events = await listener.wait(None)
                    if any(e is RECONNECTED for e in events):
                        reached = {w.space for w in self._waiters}  # missed notifications: all look
                    else:
                        reached = {str(e.payload.get("to_space")) for e in events}
                    for waiter in self._waiters:
                        if waiter.space in reached:
                            waiter.woken.set()
        except Exception as exc:  # the listener could not start, or died: waiters are told
            log.warning("the reply listener stopped: %s", exc)
            self._failed = exc
            ready.set()
            for waiter in self._waiters:
                waiter.woken.set()
        finally:
            if self._ready is ready:
                self._ready = None
