"""Tasks and messages between spaces: file_task, update_task, send_message, read_messages.

The only tools with a target space (`to`): they write into another space's inbox, and only when its
`accepts_from` lists this session's space. None of them touches the embedder.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult

from lore.core import inbox, validate
from lore.mcp.server import AppState, result
from lore.store import messages, tasks


def _session_key(state: AppState, ctx: Context[AppState, Any]) -> str | None:
    """Who "this session" is, so that it never reads its own messages (None: unknown, reads all)."""
    if state.transport == "stdio":
        return state.stdio_session
    session_id = (ctx.headers or {}).get("mcp-session-id")
    return str(session_id) if session_id else None


def _target(value: object, state: AppState, space: str) -> str:
    """The target space id. In sign-in mode ids are `<user>/<space>` and a bare id means the
    user's own (lore.userconfig): `to="work"` is `alice/work` for alice, never another user's."""
    target = validate.text(value, "to", max_chars=129)
    assert target is not None
    user, sep, _ = space.rpartition("/")
    if sep and state.config().space(target) is None:
        return f"{user}/{target}"
    return target


def _message_dict(message: messages.Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "from": message.from_space,
        "to": message.to_space,
        "source": message.source,
        "reply_to": message.reply_id,
        "sent_at": message.sent_at.isoformat(),
        "body": message.body,
    }


def register(server: MCPServer[AppState], state: AppState) -> None:
    @server.tool(description="File a task in this project's backlog, or with to=SPACE in that space's inbox.")
    async def file_task(
        title: str, body: str, ctx: Context[AppState, Any], to: str | None = None
    ) -> CallToolResult:
        head = validate.text(title, "title", max_chars=validate.MAX_TITLE)
        text = validate.body(body)
        session = await state.session(ctx)
        target = _target(to, state, session.space) if to is not None else session.space
        config = state.config()
        task = await state.run(lambda c: tasks.file(c, config, session.origin, target, head, text))
        where = "inbox of space" if task.status == "inbox" else "backlog of space"
        return result(
            f"Filed {task.id} ({task.status}) in the {where} {task.space}.",
            {"id": task.id, "space": task.space, "status": task.status},
        )

    @server.tool(description="Set a task's status: inbox|todo|doing|blocked|done; note says why.")
    async def update_task(
        id: str, status: str, ctx: Context[AppState, Any], note: str | None = None
    ) -> CallToolResult:
        lineage = inbox.parse_task_id(id)
        new = inbox.parse_status(status)
        why = validate.optional(note, "note", validate.MAX_REASON)
        session = await state.session(ctx)
        before, task = await state.run(
            lambda c: tasks.update(c, session.origin, session.readable, lineage, new, why)
        )
        return result(
            f"{task.id}: {before} → {task.status}.",
            {"id": task.id, "status": task.status, "previous": before},
        )

    @server.tool(
        description="Message another space's agents (≤4000 chars); reply_to: the m_ id answered; "
        "wait_seconds (≤60): wait for the reply."
    )
    async def send_message(
        to: str,
        body: str,
        ctx: Context[AppState, Any],
        reply_to: str | None = None,
        wait_seconds: float = 0,
    ) -> CallToolResult:
        text = validate.text(body, "body", max_chars=inbox.MAX_MESSAGE)
        assert text is not None
        answered = inbox.parse_message_id(reply_to) if reply_to is not None else None
        wait = inbox.wait_seconds(wait_seconds)
        session = await state.session(ctx)
        target = _target(to, state, session.space)
        key = _session_key(state, ctx)
        config = state.config()

        def send(conn: Any) -> messages.Message:
            return messages.send(conn, config, session.origin, target, text, reply_to=answered, session=key)

        if not wait:
            sent = await state.run(send)
            return result(f"Sent {sent.id} to {sent.to_space}.", {"id": sent.id, "to": sent.to_space})
        reader = f"{session.source} (waiting sender)"
        # Listening (the process's one LISTEN connection, lore.replies) before sending: a reply
        # cannot slip in between.
        async with state.replies.expecting(session.space, state.user() or "") as woken:
            sent = await state.run(send)

            async def claim() -> messages.Message | None:
                return await state.run(lambda c: messages.claim_reply_now(c, session.space, sent.num, reader))

            reply = await messages.await_reply(claim, woken, wait)
        if reply is None:
            return result(
                f"Sent {sent.id} to {sent.to_space}; no reply within {wait:g} s. "
                "read_messages shows a later reply.",
                {"id": sent.id, "to": sent.to_space, "reply": None},
            )
        return result(
            f"Sent {sent.id} to {sent.to_space}. Reply:\n{inbox.message_line(reply)}",
            {"id": sent.id, "to": sent.to_space, "reply": _message_dict(reply)},
        )

    @server.tool(description="Read unread messages to this project (marks them read); list its open tasks.")
    async def read_messages(ctx: Context[AppState, Any]) -> CallToolResult:
        session = await state.session(ctx)
        key = _session_key(state, ctx)

        def read(conn: Any) -> tuple[list[messages.Message], int, list[tasks.Task], int]:
            got, left = messages.read(conn, session.space, session.source, session=key)
            open_tasks, total = tasks.listing(conn, session.space, limit=50)
            return got, left, open_tasks, total

        got, left, open_tasks, total = await state.run(read)
        parts = []
        if got:
            parts.append(f"{len(got)} unread message{'s' if len(got) != 1 else ''} (now marked read):")
            parts.extend(inbox.message_line(m) for m in got)
            if left:
                parts.append(f"{left} more unread; call read_messages again.")
            parts.append("Answer with send_message(to, body, reply_to).")
        else:
            parts.append("No unread messages.")
        listed = inbox.task_list(open_tasks, space=session.space, total=total)
        shown = open_tasks[: listed.shown]
        parts.append(listed.text)
        return result(
            "\n".join(parts),
            {
                "messages": [_message_dict(m) for m in got],
                "unread_left": left,
                "tasks": [{"id": t.id, "status": t.status, "title": t.title} for t in shown],
                "open_tasks": total,
            },
        )
