"""A dedicated LISTEN connection that reconnects by itself.

One autocommit connection (never a pooled one: a pool would hand it to someone else) LISTENs on
lore's versioned channels. `wait()` blocks on the socket until the server pushes a notification or
the timeout passes: no polling. When the connection drops (the database restarted, the network
went away) the next `wait()` reconnects with a capped backoff, LISTENs again and returns
`RECONNECTED`: notifications sent while disconnected are lost, so the consumer re-reads the table,
where nothing is lost.

    async with Listener(url) as listener:
        while True:
            for event in await listener.wait(timeout=None):
                ...  # fetch what the event names: await listener.call(lambda conn: ...)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar

import anyio
import psycopg
from psycopg import sql

from lore.core.documents import json_object
from lore.core.errors import ConnectionLost, DatabaseError
from lore.core.redact import redact

CHANNEL_MESSAGES = "lore_messages_v1"
CHANNEL_TASKS = "lore_tasks_v1"
CHANNELS = (CHANNEL_MESSAGES, CHANNEL_TASKS)
T = TypeVar("T")
log = logging.getLogger("lore.store.listen")


@dataclass(frozen=True)
class Event:
    channel: str  # "" for RECONNECTED
    payload: dict[str, Any] = field(default_factory=dict)


RECONNECTED = Event("")


class Listener:
    def __init__(
        self,
        url: str,
        channels: Sequence[str] = CHANNELS,
        *,
        max_backoff: float = 2.0,
        on_state: Callable[[str], None] | None = None,
    ) -> None:
        self.url = url
        self.channels = tuple(channels)
        self.max_backoff = max_backoff
        self.on_state = on_state  # told "lost" and "reconnected" (e.g. to print it)
        self.reconnects = 0
        self._conn: psycopg.AsyncConnection[Any] | None = None

    async def __aenter__(self) -> Listener:
        try:
            self._conn = await self._open()
        except psycopg.OperationalError as exc:
            raise DatabaseError(
                f"Cannot connect to PostgreSQL to listen: {_first_line(exc)}",
                "Run `lore doctor`; for the embedded database, `lore db start`.",
            ) from exc
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with anyio.CancelScope(shield=True):
                await conn.close()

    @property
    def connected(self) -> bool:
        return self._conn is not None and not self._conn.closed

    async def wait(self, timeout: float | None) -> list[Event]:
        """The notifications that arrived (at least one), `[RECONNECTED]` after a reconnection, or
        `[]` when `timeout` seconds passed (None: wait for ever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if not self.connected:
                return [RECONNECTED] if await self._reconnect(deadline) else []
            assert self._conn is not None
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            events: list[Event] = []
            try:
                async with aclosing(self._conn.notifies(timeout=remaining, stop_after=1)) as stream:
                    async for note in stream:
                        events.append(Event(note.channel, json_object(note.payload)))
            except psycopg.OperationalError as exc:
                await self._lost(exc)
                continue
            return events

    async def call(self, fn: Callable[[psycopg.AsyncConnection[Any]], Awaitable[T]]) -> T:
        """Run a query on the listening connection (autocommit); raises ConnectionLost when it has dropped."""
        if not self.connected:
            raise ConnectionLost("not connected")
        assert self._conn is not None
        try:
            return await fn(self._conn)
        except psycopg.OperationalError as exc:
            await self._lost(exc)
            raise ConnectionLost(_first_line(exc)) from exc

    async def _open(self) -> psycopg.AsyncConnection[Any]:
        conn = await psycopg.AsyncConnection.connect(
            self.url, autocommit=True, connect_timeout=5, application_name="lore-listen"
        )
        try:
            for channel in self.channels:
                await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        except BaseException:
            await conn.close()
            raise
        return conn

    async def _lost(self, exc: BaseException) -> None:
        log.info("listener lost its connection: %s", _first_line(exc))
        if self.on_state:
            self.on_state("lost")
        conn, self._conn = self._conn, None
        if conn is not None:
            with anyio.CancelScope(shield=True):
                await conn.close()

    async def _reconnect(self, deadline: float | None) -> bool:
        delay = 0.05
        while True:
            budget = None if deadline is None else max(0.01, deadline - time.monotonic())
            try:
                with anyio.fail_after(budget):
                    self._conn = await self._open()
            except (psycopg.OperationalError, TimeoutError) as exc:
                log.debug("listener reconnect failed: %s", _first_line(exc))
            else:
                self.reconnects += 1
                log.info("listener reconnected")
                if self.on_state:
                    self.on_state("reconnected")
                return True
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                delay = min(delay, remaining)
            await anyio.sleep(delay)
            delay = min(delay * 2, self.max_backoff)


def _first_line(exc: BaseException) -> str:
    text = redact(str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__
