"""Tasks and messages between spaces: file_task, update_task, send_message, read_messages
(lore.service.work). The only tools with a target space (`to`)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from lore.core import inbox
from lore.core.rows import Message
from lore.mcp.context import result, served, session, tool
from lore.mcp.outputs import Inbox, Sent, TaskFiled, TaskMoved
from lore.service import work


def _message_dict(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "from": message.from_space,
        "to": message.to_space,
        "source": message.source,
        "reply_to": message.reply_id,
        "sent_at": message.sent_at.isoformat(),
        "body": message.body,
    }


@tool("File task", "File a task in this project's backlog, or with to=SPACE in that space's inbox.")
async def file_task(
    title: str, body: str, ctx: Context[Any, Any], to: str | None = None
) -> Annotated[CallToolResult, TaskFiled]:
    rt, here = await session(ctx)
    task = await rt.call(work.file_task, here, title, body, to=to)
    where = "inbox of space" if task.status == "inbox" else "backlog of space"
    return result(
        f"Filed {task.id} ({task.status}) in the {where} {task.space}.",
        {"id": task.id, "space": task.space, "status": task.status},
    )


@tool("Update task", "Set a task's status: inbox|todo|doing|blocked|done; note says why.")
async def update_task(
    id: str, status: str, ctx: Context[Any, Any], note: str | None = None
) -> Annotated[CallToolResult, TaskMoved]:
    rt, here = await session(ctx)
    before, task = await rt.call(work.update_task, here, id, status, note)
    return result(
        f"{task.id}: {before} → {task.status}.",
        {"id": task.id, "status": task.status, "previous": before},
    )


@tool(
    "Send message",
    "Message another space's agents (≤4000 chars); reply_to: the m_ id answered; "
    "wait_seconds (≤60): wait for the reply.",
)
async def send_message(
    to: str,
    body: str,
    ctx: Context[Any, Any],
    reply_to: str | None = None,
    wait_seconds: float = 0,
) -> Annotated[CallToolResult, Sent]:
    rt, here = await session(ctx)
    key = served(ctx).sessions.key(ctx)
    done = await work.send_message(
        rt,
        here,
        to,
        body,
        reply_to=reply_to,
        wait_seconds=wait_seconds,
        session_key=key,
        reader=f"{here.source} (waiting sender)",
    )
    sent = done.message
    if not done.waited:
        return result(f"Sent {sent.id} to {sent.to_space}.", {"id": sent.id, "to": sent.to_space})
    if done.reply is None:
        return result(
            f"Sent {sent.id} to {sent.to_space}; no reply within {done.waited:g} s. "
            "read_messages shows a later reply.",
            {"id": sent.id, "to": sent.to_space, "reply": None},
        )
    return result(
        f"Sent {sent.id} to {sent.to_space}. Reply:\n{inbox.message_line(done.reply)}",
        {"id": sent.id, "to": sent.to_space, "reply": _message_dict(done.reply)},
    )


@tool("Read messages", "Read unread messages to this project (marks them read); list its open tasks.")
async def read_messages(ctx: Context[Any, Any]) -> Annotated[CallToolResult, Inbox]:
    rt, here = await session(ctx)
    key = served(ctx).sessions.key(ctx)
    got = await rt.call(work.read_messages, here, here.source, session_key=key)
    parts = []
    if got.messages:
        n = len(got.messages)
        parts.append(f"{n} unread message{'s' if n != 1 else ''} (now marked read):")
        parts.extend(inbox.message_line(m) for m in got.messages)
        if got.unread_left:
            parts.append(f"{got.unread_left} more unread; call read_messages again.")
        parts.append("Answer with send_message(to, body, reply_to).")
    else:
        parts.append("No unread messages.")
    listed = inbox.task_list(got.tasks, space=here.space, total=got.open_tasks)
    shown = got.tasks[: listed.shown]
    parts.append(listed.text)
    return result(
        "\n".join(parts),
        {
            "messages": [_message_dict(m) for m in got.messages],
            "unread_left": got.unread_left,
            "tasks": [{"id": t.id, "status": t.status, "title": t.title} for t in shown],
            "open_tasks": got.open_tasks,
        },
    )
