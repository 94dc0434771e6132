"""The MCP tools: thin wrappers that parse, call the core, and format compact text.

Descriptions are short and exact: the JSON of tools/list is paid for in every session's context.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult

from lore.core import render, validate
from lore.core.session import SessionContext
from lore.core.timeline import When, parse_time
from lore.mcp import search_tools
from lore.mcp.server import AppState, result
from lore.service import retrieval
from lore.store import facts, notes


def register(server: MCPServer[AppState], state: AppState) -> None:
    @server.tool(
        description=(
            "Store a short durable fact (max 1000 chars) in this project's memory. subject: what it is "
            "about (e.g. the repo name); valid_from/valid_to: ISO dates when it is true."
        )
    )
    async def remember_fact(
        statement: str,
        ctx: Context[AppState, Any],
        subject: str | None = None,
        valid_from: str | None = None,
        valid_to: str | None = None,
    ) -> CallToolResult:
        """subject: what it is about (e.g. the repo name); valid_*: ISO dates when it is true."""

        text = validate.statement(statement)
        subj = validate.optional(subject, "subject", validate.MAX_SUBJECT)
        start, end = parse_time(valid_from, "valid_from"), parse_time(valid_to, "valid_to")
        session = await state.session(ctx)
        fact = await state.run(
            lambda c: facts.remember(c, session.origin, text, subject=subj, valid_from=start, valid_to=end)
        )
        return result(f"Remembered {fact.id} in space {fact.space}.", {"id": fact.id, "space": fact.space})

    @server.tool(
        description=(
            "Store a note (max 32 KiB) for search_notes. kind: brief|product|pattern|tech|active|"
            "progress|devenv|task|plan|decision|note."
        )
    )
    async def remember_note(
        body: str,
        ctx: Context[AppState, Any],
        kind: str = "note",
        title: str | None = None,
        tags: list[str] | None = None,
    ) -> CallToolResult:
        """kind: brief|product|pattern|tech|active|progress|devenv|task|plan|decision|note."""

        text, k = validate.body(body), validate.kind(kind)
        head = validate.optional(title, "title", validate.MAX_TITLE)
        labels = validate.tags(tags)
        session = await state.session(ctx)
        note = await state.run(
            lambda c: notes.remember(c, session.origin, text, kind=k, title=head, tags=labels)
        )
        retrieval.poke(state)  # embedded in the background, never waited for
        return result(
            f"Remembered {note.id} ({note.kind}) in space {note.space}.",
            {"id": note.id, "kind": note.kind, "space": note.space},
        )

    @server.tool(
        description=(
            "List this project's facts, most relevant first. as_of: what lore believed then; "
            "valid_at: what was true then (ISO dates)."
        )
    )
    async def recall_facts(
        ctx: Context[AppState, Any],
        subject: str | None = None,
        as_of: str | None = None,
        valid_at: str | None = None,
    ) -> CallToolResult:
        """as_of: what lore believed then; valid_at: what was true then (ISO dates)."""

        subj = validate.optional(subject, "subject", validate.MAX_SUBJECT)
        when = When(parse_time(as_of, "as_of"), parse_time(valid_at, "valid_at"))
        session = await state.session(ctx)
        budget = state.config().session_start_max_chars
        rows, total = await state.run(lambda c: _recall(c, session, when, subj))
        header = _recall_header(subj, when)
        out = render.recall(
            rows,
            space=session.space,
            workspace_name=session.workspace_name,
            max_chars=budget,
            total=total,
            header=header,
        )
        shown = rows[: out.shown]
        return result(
            out.text,
            {"space": session.space, "total": total, "shown": out.shown, "ids": [f.id for f in shown]},
        )

    # search_notes lives with the retrieval tools; registered here to keep the core tools' order.
    search_tools.register_search(server, state)

    @server.tool(description="Replace fact id (f_N) with a new version; history keeps the old one.")
    async def revise_fact(
        id: str,
        ctx: Context[AppState, Any],
        statement: str | None = None,
        subject: str | None = None,
        valid_from: str | None = None,
        valid_to: str | None = None,
    ) -> CallToolResult:
        _, lineage = validate.item_id(id, expect="f")
        text = validate.statement(statement) if statement is not None else None
        subj = validate.optional(subject, "subject", validate.MAX_SUBJECT)
        start, end = parse_time(valid_from, "valid_from"), parse_time(valid_to, "valid_to")
        session = await state.session(ctx)
        _, new = await state.run(
            lambda c: facts.revise(
                c,
                session.origin,
                session.readable,
                lineage,
                statement=text,
                subject=subj,
                valid_from=start,
                valid_to=end,
            )
        )
        return result(f"Revised {new.id}: {new.statement}", {"id": new.id, "version": new.version_id})

    @server.tool(
        description="Forget a fact or note by id (f_N or n_N), with a reason; kept in the audit trail."
    )
    async def forget(id: str, reason: str, ctx: Context[AppState, Any]) -> CallToolResult:
        prefix, lineage = validate.item_id(id)
        why = validate.text(reason, "reason", max_chars=validate.MAX_REASON)
        assert why is not None
        session = await state.session(ctx)
        module = facts if prefix == "f" else notes
        await state.run(lambda c: module.forget(c, session.origin, session.readable, lineage, why))
        return result(f"Forgot {id}.", {"id": id})


def _recall(
    conn: Any, session: SessionContext, when: When, subject: str | None
) -> tuple[list[facts.Fact], int]:
    return facts.page(
        conn,
        session.readable,
        when,
        subject=subject,
        prefer_subject=session.workspace_name,
        limit=render.RECALL_MAX_FACTS,
    )


def _recall_header(subject: str | None, when: When) -> str | None:
    parts = []
    if subject:
        parts.append(f"about {subject}")
    if when.as_of:
        parts.append(f"as believed at {when.as_of.isoformat()}")
    if when.valid_at:
        parts.append(f"true at {when.valid_at.isoformat()}")
    return ", ".join(parts) or None
