"""`lore tasks`, `lore messages`, `lore listen`: tasks and messages from a terminal, through the same
core as the MCP tools. The space is the current directory's (or `--workspace`'s), as everywhere."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime
from functools import partial
from typing import Any

import anyio

from lore.cli.context import gateway, runtime
from lore.cli.gateway import Gateway, local_only
from lore.core import inbox
from lore.core.errors import InvalidInput
from lore.core.inert import printable
from lore.core.rows import Message, Task, from_json
from lore.service import work

SOURCE = "cli"


def run(args: argparse.Namespace) -> int:
    if args.command == "listen":
        local_only(
            "listen",
            "Follow the server's messages in an agent (the per-prompt hook shows what arrived), or with "
            "`lore messages` now and then.",
        )
        with runtime() as rt:
            space = rt.command_session(args.workspace).space
            return anyio.run(partial(_listen, rt, space, desktop=not args.no_desktop))
    with gateway() as gw:
        if args.command == "tasks":
            return _tasks(gw, args)
        if args.action == "send":
            return _send(gw, args)
        return _messages(gw, args.workspace, args.action)


def _tasks(gw: Gateway, args: argparse.Namespace) -> int:
    rest: list[str] = args.args
    if args.action == "file":
        if not 1 <= len(rest) <= 2:
            raise InvalidInput(
                "lore tasks file takes TITLE [BODY].", 'Example: lore tasks file "Fix CI" "why…"'
            )
        body = rest[1] if len(rest) > 1 else rest[0]
        filed = gw.file_task(args.workspace, rest[0], body, to=args.to, allow_secret=args.allow_secret)
        task = from_json(Task, filed["task"])
        print(f"Filed {task.id} ({task.status}) in space {task.space}.")
        return 0
    if args.action == "update":
        if len(rest) != 2:
            raise InvalidInput("lore tasks update takes ID STATUS.", "Example: lore tasks update n_12 doing")
        moved = gw.update_task(args.workspace, rest[0], rest[1], args.note)
        print(f"{moved['task']['id']}: {moved['before']} → {moved['task']['status']}.")
        return 0
    if args.action == "show":
        if len(rest) != 1:
            raise InvalidInput("lore tasks show takes ID.", "Example: lore tasks show n_12")
        return _show_task(gw.task(args.workspace, rest[0]))
    listed = gw.tasks(args.workspace, every=args.all)
    rows, space = [from_json(Task, t) for t in listed["tasks"]], listed["space"]
    if not rows:
        print(f"No {'' if args.all else 'open '}tasks in space {space}.")
        return 0
    print(f"Tasks of space {space} ({listed['total']}):")
    for task in rows:
        print(terminal(inbox.task_line(task)))
    return 0


def _show_task(found: dict[str, Any]) -> int:
    task = from_json(Task, found["task"])
    print(terminal(inbox.task_line(task, max_body=100_000)))
    print(terminal(f"  filed {task.filed_at:%Y-%m-%d %H:%M} by {task.from_space} ({task.from_source})"))
    for event in found["events"]:
        why = f": {event['note']}" if event.get("note") else ""
        at = datetime.fromisoformat(event["at"])
        print(
            terminal(
                f"  {at:%Y-%m-%d %H:%M} → {event['status']} by {event['space']} ({event['source']}){why}"
            )
        )
    return 0


def _messages(gw: Gateway, workspace: str | None, action: str) -> int:
    if action == "read":
        got = gw.read_messages(workspace)
        for message in got["messages"]:
            print(terminal(inbox.message_line(from_json(Message, message))))
        left = got["unread_left"]
        if got["messages"]:
            print(f"{len(got['messages'])} read{f'; {left} more unread (read again)' if left else ''}.")
        else:
            print("No unread messages.")
        return 0
    listed = gw.messages(workspace)
    space = listed["space"]
    if not listed["messages"]:
        print(f"No messages to or from space {space}.")
        return 0
    for message in (from_json(Message, m) for m in listed["messages"]):
        mark = "unread" if message.read_at is None else "read"
        to = f"to {message.to_space}, " if message.to_space != space else ""
        print(terminal(f"{inbox.message_line(message)} [{to}{mark}]"))
    return 0


def _send(gw: Gateway, args: argparse.Namespace) -> int:
    rest: list[str] = args.args
    if len(rest) != 2:
        raise InvalidInput(
            "lore messages send takes TO BODY.", 'Example: lore messages send work "CI is green"'
        )
    if args.reply_to:
        inbox.parse_message_id(args.reply_to, "--reply-to")
    wait = inbox.wait_seconds(args.wait)

    def said(sent: dict[str, Any]) -> None:
        print(f"Sent {sent['id']} to {sent['to_space']}; waiting up to {wait:g} s for the reply…", flush=True)

    done = gw.send_message(
        args.workspace,
        rest[0],
        rest[1],
        on_sent=said,
        reply_to=args.reply_to,
        wait_seconds=wait,
        allow_secret=args.allow_secret,
    )
    sent = done["message"]
    if not wait:
        print(f"Sent {sent['id']} to {sent['to_space']}.")
        return 0
    if done["reply"] is None:
        print("No reply yet; `lore messages` shows it when it comes.")
        return 1
    print(terminal(inbox.message_line(from_json(Message, done["reply"]))))
    return 0


async def _listen(rt: Any, space: str, *, desktop: bool) -> int:
    def state(what: str) -> None:
        text = "lost the database connection; reconnecting…" if what == "lost" else "reconnected"
        print(f"lore listen: {text}", file=sys.stderr, flush=True)

    def ready() -> None:
        print(f"Listening for messages and inbox tasks to space {space} (Ctrl-C stops).", flush=True)

    notify = _notifier() if desktop else None
    async for item in work.arrivals(rt, space, on_state=state, on_ready=ready):
        if isinstance(item, Message):
            re_part = f", re {item.reply_id}" if item.reply_id else ""
            line = f"message {item.id} from {item.from_space} ({item.source}){re_part}: {item.body}"
            _show(line, notify, f"lore: message {item.id} from {item.from_space}", item.body)
        else:
            line = inbox.task_line(item).removeprefix("- ")
            _show(
                f"task {line}",
                notify,
                f"lore: task {item.id} from {item.from_space}",
                item.title or item.body,
            )
    return 0


def terminal(text: str) -> str:
    """Another agent's text as a terminal may show it: no escape sequence (CSI, OSC: a title, the
    clipboard through OSC 52, a cleared screen), no other C0 or C1 control character, no bidi
    override; a line break starts an indented line, so no text can pass for a line lore printed."""
    return "\n    ".join(printable(text).splitlines() or [""])


def _show(line: str, notify: Any, title: str, body: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {terminal(line)}", flush=True)
    if notify is not None:
        notify(" ".join(terminal(title).split()), " ".join(terminal(body).split()))


def _notifier() -> Any:
    """A desktop notification where one exists (osascript on macOS, notify-send on a Linux desktop).
    No message text goes on a command line (every local user can read another's argv): osascript
    reads its script from standard input; notify-send takes only arguments, so it gets the title
    alone (which space, which id) and the text stays in the terminal."""
    if sys.platform == "darwin" and shutil.which("osascript"):

        def mac(title: str, body: str) -> None:
            script = f"display notification {_applescript(body[:200])} with title {_applescript(title)}"
            subprocess.run(
                ["osascript"], input=script, text=True, capture_output=True, timeout=5, check=False
            )

        return mac
    desktop = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
    if desktop and shutil.which("notify-send"):

        def linux(title: str, body: str) -> None:
            subprocess.run(
                ["notify-send", "--", title, "lore listen shows it"],
                capture_output=True,
                timeout=5,
                check=False,
            )

        return linux
    return None


def _applescript(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
