"""The dedicated LISTEN connection: delivery, bounded waits for a reply (on the process's one shared
listener, lore.store.replies, as send_message waits), and database restarts."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import anyio
import psycopg
import pytest

from lore.core.config import load_config
from lore.core.rows import Message
from lore.core.session import Origin
from lore.db import embedded
from lore.store import messages
from lore.store.listen import CHANNEL_MESSAGES, CHANNEL_TASKS, RECONNECTED, Listener
from lore.store.replies import Replies

from .conftest import Spaces, write_config

pytestmark = pytest.mark.anyio
LORE = str(Path(sys.executable).parent / "lore")


class Lines:
    """Lines of a child's stream, read by a thread, so that a test waits a bounded time for one."""

    def __init__(self, stream: IO[str]) -> None:
        self._queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self._queue.put(line)

    def next(self, timeout: float = 20) -> str:
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout} s") from None


def insert(url: str, to: str, body: str, reply_to: int | None = None) -> int:
    with psycopg.connect(url) as c:
        row = c.execute(
            "INSERT INTO messages (to_space, from_space, body, reply_to, source) "
            "VALUES (%s, 'beta', %s, %s, 'test') RETURNING id",
            (to, body, reply_to),
        ).fetchone()
    assert row is not None
    return int(row[0])


def _on_connection(url: str, fn: Callable[[psycopg.Connection], Any]) -> Any:
    with psycopg.connect(url, autocommit=True) as c:
        return fn(c)


@asynccontextmanager
async def _replies(url: str, events: list[str] | None = None) -> AsyncIterator[Replies]:
    """The process's shared reply listener, as a server's lifespan runs it; its poll (the backstop)
    set far off, so a reply that arrives in time came by LISTEN."""

    async def run(fn: Callable[[psycopg.Connection], Any]) -> Any:
        return await anyio.to_thread.run_sync(_on_connection, url, fn)

    told = events.append if events is not None else None
    replies = Replies(url=lambda: url, run=run, poll_seconds=600, on_event=told)
    async with anyio.create_task_group() as group:
        replies.attach(group)
        try:
            yield replies
        finally:
            group.cancel_scope.cancel()


async def _reply(replies: Replies, space: str, num: int, reader: str, timeout: float) -> Message | None:
    """What send_message(wait_seconds=timeout) waits for (lore.service.work), after its send."""
    async with replies.expecting(space) as woken:

        async def claim() -> Message | None:
            found: Message | None = await replies.run(
                lambda c: messages.claim_reply_now(c, space, num, reader)
            )
            return found

        return await messages.await_reply(claim, woken, timeout)


async def test_a_committed_message_wakes_the_listener(spaces: Spaces, db_url: str) -> None:
    async with Listener(db_url) as listener:
        assert await listener.wait(0.05) == []
        num = await anyio.to_thread.run_sync(insert, db_url, "alpha", "ping")
        events = await listener.wait(5)
        assert [e.channel for e in events] == [CHANNEL_MESSAGES]
        assert events[0].payload == {"id": num, "to_space": "alpha", "from_space": "beta", "reply_to": None}
        # tasks arriving in an inbox notify their own channel
        with psycopg.connect(db_url) as c:
            from lore.store import tasks

            task = tasks.file(c, spaces.config, spaces.origin("beta"), "alpha", "t", "b")
        events = await listener.wait(5)
        assert events[0].channel == CHANNEL_TASKS
        assert events[0].payload == {
            "id": task.lineage,
            "space": "alpha",
            "from_space": "beta",
            "status": "inbox",
        }


async def test_a_reply_is_delivered_by_listen_and_the_wait_is_bounded(spaces: Spaces, db_url: str) -> None:
    question = await anyio.to_thread.run_sync(insert, db_url, "beta", "q?")
    events: list[str] = []
    async with _replies(db_url, events) as replies:
        # nothing comes: returns None after the bound
        started = time.monotonic()
        assert await _reply(replies, "beta", question, "t", 0.3) is None
        # The 0.3 s is a floor; the ceiling only says the wait ended (wide on purpose: this 2-core
        # machine is shared with parallel test runs, which delay wake-ups).
        assert 0.3 <= time.monotonic() - started < 5

        # noise on the channel does not end the wait; the reply does, and is marked read
        async def answer() -> None:
            await anyio.sleep(0.2)
            await anyio.to_thread.run_sync(insert, db_url, "alpha", "noise")
            await anyio.sleep(0.2)
            await anyio.to_thread.run_sync(insert, db_url, "beta", "a!", question)

        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            reply = await _reply(replies, "beta", question, "waiter", 10)
        assert reply is not None and reply.body == "a!" and reply.read_by == "waiter"
        assert "notified" in events and "polled" not in events  # LISTEN woke it, not the backstop
        # a reply that is already there is returned at once
        again = await _reply(replies, "beta", question, "other", 10)
        assert again is not None and again.num == reply.num and again.read_by == "waiter"


async def test_listener_and_messages_survive_a_database_restart(
    private_db: tuple[dict[str, str], str],
) -> None:
    env, url = private_db
    before = await anyio.to_thread.run_sync(insert, url, "alpha", "sent before the restart")
    states: list[str] = []
    async with Listener(url, on_state=states.append) as listener:
        await anyio.to_thread.run_sync(embedded.stop, env)
        await anyio.to_thread.run_sync(embedded.start, env)
        events = await listener.wait(30)
        assert events == [RECONNECTED] and states == ["lost", "reconnected"]
        num = await anyio.to_thread.run_sync(insert, url, "alpha", "sent after the restart")
        events = await listener.wait(10)
        assert [e.payload.get("id") for e in events] == [num]
    with psycopg.connect(url) as c:
        got, _ = messages.read(c, "alpha", "t")
    assert [m.num for m in got] == [before, num]


async def test_a_wait_spanning_a_restart_still_gets_the_reply(private_db: tuple[dict[str, str], str]) -> None:
    env, url = private_db
    question = await anyio.to_thread.run_sync(insert, url, "beta", "q?")

    async def restart_then_answer() -> None:
        await anyio.sleep(0.2)
        await anyio.to_thread.run_sync(embedded.stop, env)
        await anyio.to_thread.run_sync(embedded.start, env)
        await anyio.to_thread.run_sync(insert, url, "beta", "answer after restart", question)

    events: list[str] = []
    async with _replies(url, events) as replies, anyio.create_task_group() as tg:
        tg.start_soon(restart_then_answer)
        reply = await _reply(replies, "beta", question, "waiter", 45)
    assert reply is not None and reply.body == "answer after restart"
    assert "reconnected" in events


def test_lore_listen_prints_arrivals_and_survives_a_restart(
    private_db: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, url = private_db
    dirs = {name: tmp_path / name for name in ("alpha", "beta", "gamma")}
    for d in dirs.values():
        d.mkdir()
    config = tmp_path / "config.toml"
    write_config(config, dirs)
    proc_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LORE_CONFIG": str(config),
        "LORE_DATA_DIR": env["LORE_DATA_DIR"],
        "LORE_EMBEDDER": "broken",
    }
    proc = subprocess.Popen(
        [LORE, "listen", "--no-desktop"],
        cwd=dirs["alpha"],
        env=proc_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = Lines(proc.stdout), Lines(proc.stderr)
    try:
        assert out.next().startswith("Listening for messages and inbox tasks to space alpha")
        insert(url, "beta", "not for alpha")
        insert(url, "alpha", "first message")
        assert "message m_2 from beta (test): first message" in out.next()
        cfg = load_config(proc_env)
        with psycopg.connect(url) as c:
            from lore.store import tasks

            tasks.file(c, cfg, Origin("beta", "codex", str(dirs["beta"])), "alpha", "Fix CI", "red")
        assert "task n_1 [inbox] from beta: Fix CI — red" in out.next()
        embedded.stop(env)
        assert "lost the database connection" in err.next()
        embedded.start(env)
        assert "reconnected" in err.next(40)
        with psycopg.connect(url) as c:
            messages.send(c, cfg, Origin("beta", "codex", None), "alpha", "after the restart")
        assert "after the restart" in out.next()
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
