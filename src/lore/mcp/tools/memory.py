"""Facts and notes: remember_fact, remember_note, recall_facts, revise_fact, forget (lore.service.memory)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

from lore.mcp.context import result, session, tool
from lore.mcp.outputs import FactStored, Forgotten, NoteStored, Recalled, Revised
from lore.service import memory


@tool(
    "Remember fact",
    "Store a short durable fact (max 1000 chars) in this project's memory. subject: what it is "
    "about (e.g. the repo name); valid_from/valid_to: ISO dates when it is true.",
    idempotent=True,  # the same fact again writes nothing ("Already remembered as f_N")
)
async def remember_fact(
    statement: str,
    ctx: Context[Any, Any],
    subject: str | None = None,
    valid_from: str | None = None,
    valid_to: str | None = None,
    supersedes: str | None = None,
) -> Annotated[CallToolResult, FactStored]:
    """subject: what it is about (e.g. the repo name); valid_*: ISO dates when it is true;
    supersedes: fact ids this one replaces."""
    rt, here = await session(ctx)
    done = await rt.call(
        memory.remember_fact,
        here,
        statement,
        subject=subject,
        valid_from=valid_from,
        valid_to=valid_to,
        supersedes=supersedes,
    )
    return result(done.text(), done.structured())


@tool(
    "Remember note",
    "Store a note (max 32 KiB) for search_notes. kind: brief|product|pattern|tech|active|"
    "progress|devenv|task|plan|decision|note; when: ISO date it happened (default now).",
    idempotent=True,  # the same note again writes nothing ("Already remembered as n_N")
)
async def remember_note(
    body: str,
    ctx: Context[Any, Any],
    kind: str = "note",
    title: str | None = None,
    tags: list[str] | None = None,
    when: str | None = None,
) -> Annotated[CallToolResult, NoteStored]:
    """kind: brief|product|pattern|tech|active|progress|devenv|task|plan|decision|note; when: ISO
    8601 date or time it happened (default: now)."""
    rt, here = await session(ctx)
    done = await rt.call(memory.remember_note, here, body, kind=kind, title=title, tags=tags, when=when)
    return result(done.text(), {**done.structured(), "kind": done.item.kind})


@tool(
    "Recall facts",
    "List this project's facts, most relevant first. as_of: what lore believed then; "
    "valid_at: what was true then (ISO dates).",
    read_only=True,
)
async def recall_facts(
    ctx: Context[Any, Any],
    subject: str | None = None,
    as_of: str | None = None,
    valid_at: str | None = None,
) -> Annotated[CallToolResult, Recalled]:
    """as_of: what lore believed then; valid_at: what was true then (ISO dates)."""
    rt, here = await session(ctx)
    found = await rt.call(memory.recall, here, subject=subject, as_of=as_of, valid_at=valid_at)
    out = found.rendered(rt.config().session_start_max_chars)
    shown = found.facts[: out.shown]
    return result(
        out.text,
        {"space": here.space, "total": found.total, "shown": out.shown, "ids": [f.id for f in shown]},
    )


@tool(
    "Revise fact",
    "Replace fact id (f_N) with a new version; history keeps the old one.",
    idempotent=True,  # the same revision again changes nothing (refused as a no-op)
)
async def revise_fact(
    id: str,
    ctx: Context[Any, Any],
    statement: str | None = None,
    subject: str | None = None,
    valid_from: str | None = None,
    valid_to: str | None = None,
) -> Annotated[CallToolResult, Revised]:
    rt, here = await session(ctx)
    _, new = await rt.call(
        memory.revise_fact,
        here,
        id,
        statement=statement,
        subject=subject,
        valid_from=valid_from,
        valid_to=valid_to,
    )
    return result(f"Revised {new.id}: {new.statement}", {"id": new.id, "version": new.version_id})


@tool(
    "Forget",
    "Forget a fact or note by id (f_N or n_N), with a reason; kept in the audit trail.",
    destructive=True,
    idempotent=True,  # a forgotten item cannot be forgotten again
)
async def forget(id: str, reason: str, ctx: Context[Any, Any]) -> Annotated[CallToolResult, Forgotten]:
    rt, here = await session(ctx)
    gone = await rt.call(memory.forget, here, id, reason)
    return result(f"Forgot {gone.id}.", {"id": gone.id})
