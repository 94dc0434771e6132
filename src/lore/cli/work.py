"""`lore tasks`, `lore messages`, `lore listen`: tasks and messages from a terminal, through the same
core as the MCP tools. The space is the current directory's (or `--workspace`'s), as everywhere."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from lore.core import inbox, validate
from lore.core.config import Config, load_config
from lore.core.errors import ConnectionLost, InvalidInput
from lore.core.session import SessionContext, build
from lore.core.workspace import WorkspaceSignal, choose_workspace
from lore.db import connect, migrate
from lore.store import messages, tasks
from lore.store.listen import CHANNEL_MESSAGES, CHANNEL_TASKS, CHANNELS, RECONNECTED, Event, Listener

SOURCE = "cli"


def run(args: argparse.Namespace) -> int:
    config = load_config()
    signal = (
        WorkspaceSignal(Path(args.workspace), "--workspace")
        if args.workspace
        else choose_workspace(None, os.environ, [], os.getcwd())
    )
    session = build(signal, config, os.environ, SOURCE)
    url = connect.target(config.database_url).url
    with connect.connect(url) as conn:
        migrate.upgrade(conn)
        conn.commit()
        if args.command == "tasks":
            return _tasks(conn, config, session, args)
        if args.command == "messages" and args.action != "send":
            return _messages(conn, session, args.action)
    if args.command == "messages":
        return _send(url, config, session, args)
    return asyncio.run(_listen(url, session.space, desktop=not args.no_desktop))


def _tasks(conn: Any, config: Config, session: SessionContext, args: argparse.Namespace) -> int:
    rest: list[str] = args.args
    if args.action == "file":
        if not 1 <= len(rest) <= 2:
            raise InvalidInput(
                "lore tasks file takes TITLE [BODY].", 'Example: lore tasks file "Fix CI" "why…"'
            )
        title = validate.text(rest[0], "title", max_chars=validate.MAX_TITLE)
        body = validate.body(rest[1] if len(rest) > 1 else rest[0])
        target = args.to or session.space
        task = tasks.file(conn, config, session.origin, target, title, body, allow_secret=args.allow_secret)
        print(f"Filed {task.id} ({task.status}) in space {task.space}.")
        return 0
    if args.action == "update":
        if len(rest) != 2:
            raise InvalidInput("lore tasks update takes ID STATUS.", "Example: lore tasks update n_12 doing")
        lineage, status = inbox.parse_task_id(rest[0]), inbox.parse_status(rest[1])
        note = validate.optional(args.note, "note", validate.MAX_REASON)
        before, task = tasks.update(conn, session.origin, session.readable, lineage, status, note)
        print(f"{task.id}: {before} → {task.status}.")
        return 0
    if args.action == "show":
        if len(rest) != 1:
            raise InvalidInput("lore tasks show takes ID.", "Example: lore tasks show n_12")
        lineage = inbox.parse_task_id(rest[0])
        task = tasks.get(conn, session.readable, lineage)
        print(inbox.task_line(task, max_body=100_000))
        print(f"  filed {task.filed_at:%Y-%m-%d %H:%M} by {task.from_space} ({task.from_source})")
        for event in tasks.history(conn, session.readable, lineage):
            why = f": {event.note}" if event.note else ""
            print(f"  {event.at:%Y-%m-%d %H:%M} → {event.status} by {event.space} ({event.source}){why}")
        return 0
    statuses = inbox.STATUSES if args.all else inbox.OPEN_STATUSES
    rows, total = tasks.listing(conn, session.space, statuses, limit=10_000)
    if not rows:
        print(f"No {'' if args.all else 'open '}tasks in space {session.space}.")
        return 0
    print(f"Tasks of space {session.space} ({total}):")
    for task in rows:
        print(inbox.task_line(task))
    return 0


def _messages(conn: Any, session: SessionContext, action: str) -> int:
    if action == "read":
        got, left = messages.read(conn, session.space, SOURCE, limit=100)
        for message in got:
            print(inbox.message_line(message))
        print(f"{len(got)} read{f'; {left} more unread' if left else ''}." if got else "No unread messages.")
        return 0
    shown = messages.recent(conn, session.space)
    if not shown:
        print(f"No messages to or from space {session.space}.")
        return 0
    for message in shown:
        mark = "unread" if message.read_at is None else "read"
        to = f"to {message.to_space}, " if message.to_space != session.space else ""
        print(f"{inbox.message_line(message)} [{to}{mark}]")
    return 0


def _send(url: str, config: Config, session: SessionContext, args: argparse.Namespace) -> int:
    rest: list[str] = args.args
    if len(rest) != 2:
        raise InvalidInput(
            "lore messages send takes TO BODY.", 'Example: lore messages send work "CI is green"'
        )
    target = validate.text(rest[0], "to", max_chars=64)
    body = validate.text(rest[1], "body", max_chars=inbox.MAX_MESSAGE)
    assert target is not None and body is not None
    answered = inbox.parse_message_id(args.reply_to, "--reply-to") if args.reply_to else None
    wait = inbox.wait_seconds(args.wait)

    def send() -> messages.Message:
        with connect.connect(url) as conn:
            return messages.send(
                conn, config, session.origin, target, body, reply_to=answered, allow_secret=args.allow_secret
            )

    if not wait:
        sent = send()
        print(f"Sent {sent.id} to {sent.to_space}.")
        return 0

    async def send_and_wait() -> int:
        async with Listener(url, [CHANNEL_MESSAGES]) as listener:  # listening before the send
            sent = await asyncio.to_thread(send)
            print(f"Sent {sent.id} to {sent.to_space}; waiting up to {wait:g} s for the reply…", flush=True)
            reply = await messages.wait_for_reply(listener, session.space, sent.num, SOURCE, wait)
        if reply is None:
            print("No reply yet; `lore messages` shows it when it comes.")
            return 1
        print(inbox.message_line(reply))
        return 0

    return asyncio.run(send_and_wait())


async def _listen(url: str, space: str, *, desktop: bool) -> int:
    def state(what: str) -> None:
        text = "lost the database connection; reconnecting…" if what == "lost" else "reconnected"
        print(f"lore listen: {text}", file=sys.stderr, flush=True)

    notify = _notifier() if desktop else None
    async with Listener(url, CHANNELS, on_state=state) as listener:
        after_message = await listener.call(messages.latest)
        after_task = await listener.call(tasks.latest)
        print(f"Listening for messages and inbox tasks to space {space} (Ctrl-C stops).", flush=True)
        while True:
            events = await listener.wait(None)
            if not any(_concerns(event, space) for event in events):
                continue
            try:
                after_message = await _new_messages(listener, space, after_message, notify)
                after_task = await _new_tasks(listener, space, after_task, notify)
            except ConnectionLost:
                continue  # the next wait reconnects and says RECONNECTED: we catch up then


async def _new_messages(listener: Listener, space: str, after: int, notify: Any) -> int:
    """Show the messages to `space` above id `after`; returns the new high-water mark."""
    while True:
        fresh = await listener.call(partial(messages.since, space=space, after=after))
        for message in fresh:
            re_part = f", re {message.reply_id}" if message.reply_id else ""
            line = (
                f"message {message.id} from {message.from_space} ({message.source}){re_part}: {message.body}"
            )
            _show(line, notify, f"lore: message from {message.from_space}", message.body)
            after = max(after, message.num)
        if len(fresh) < 50:
            return after


async def _new_tasks(listener: Listener, space: str, after: int, notify: Any) -> int:
    arrived = await listener.call(partial(tasks.inbox_since, space=space, after=after))
    for task in arrived:
        line = inbox.task_line(task).removeprefix("- ")
        _show(f"task {line}", notify, f"lore: task from {task.from_space}", task.title or task.body)
    return max([after, *(task.lineage for task in arrived)])


def _concerns(event: Event, space: str) -> bool:
    if event is RECONNECTED:
        return True
    if event.channel == CHANNEL_MESSAGES:
        return event.payload.get("to_space") == space
    return event.channel == CHANNEL_TASKS and event.payload.get("space") == space


def _show(line: str, notify: Any, title: str, body: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {line}", flush=True)
    if notify is not None:
        notify(title, body)


def _notifier() -> Any:
    """A desktop notification where one exists (notify-send on a Linux desktop, osascript on macOS)."""
    if sys.platform == "darwin" and shutil.which("osascript"):

        def mac(title: str, body: str) -> None:
            script = f"display notification {_applescript(body[:200])} with title {_applescript(title)}"
            subprocess.run(["osascript", "-e", script], capture_output=True, timeout=5, check=False)

        return mac
    desktop = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if desktop and shutil.which("notify-send"):

        def linux(title: str, body: str) -> None:
            subprocess.run(["notify-send", title, body[:200]], capture_output=True, timeout=5, check=False)

        return linux
    return None


def _applescript(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
