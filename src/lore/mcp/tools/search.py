"""Retrieval: search_notes, link_notes, mark_irrelevant (lore.service.search)."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult
from pydantic import Field

from lore.core import ids
from lore.core.validate import RELATIONS
from lore.mcp.context import result, session, tool
from lore.mcp.outputs import Linked, MarkedIrrelevant, Searched
from lore.service import search


@tool(
    "Search notes",
    "Search notes by meaning and keywords; only relevant matches, with linked notes. "
    "kinds/tags: filters; limit: 1-20.",
    read_only=True,
)
async def search_notes(
    query: str,
    ctx: Context[Any, Any],
    kinds: list[str] | None = None,
    tags: list[str] | None = None,
    limit: int = 5,
) -> Annotated[CallToolResult, Searched]:
    rt, here = await session(ctx)
    hits = await search.search_notes(
        rt,
        here.readable,
        query,
        session_space=here.space,
        kinds=kinds,
        tags=tags,
        limit=limit,
        client=here.source,
    )
    if not hits:
        return result(f"No notes match {query.strip()!r}.", {"results": []})
    results = [{k: v for k, v in h.__dict__.items() if v is not None} for h in hits]
    return result("\n".join(h.line() for h in hits), {"results": results})


async def _link_notes(**args: Any) -> Annotated[CallToolResult, Linked]:
    rt, here = await session(args["ctx"])
    edge = await rt.call(search.link_notes, here, args["from"], args["relation"], args["to"])
    said = "Linked" if edge.created else "Already linked"
    return result(f"{said}: {edge.describe()}.", {"edge": edge.describe(), "created": edge.created})


# `from` is a Python keyword: the tool declares it through an alias (what the schema shows).
_LINK_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind)
        for name, kind in (
            ("from_", Annotated[str, Field(alias="from", description="note id, e.g. n_3")]),
            ("relation", Annotated[str, Field(description="|".join(RELATIONS))]),
            ("to", Annotated[str, Field(description="note id")]),
            ("ctx", Context[Any, Any]),
        )
    ],
    return_annotation=Annotated[CallToolResult, Linked],
)
_link_notes.__signature__ = _LINK_SIGNATURE  # type: ignore[attr-defined]
_link_notes.__annotations__ = {p.name: p.annotation for p in _LINK_SIGNATURE.parameters.values()}
_link_notes.__name__ = "link_notes"
link_notes = tool(
    "Link notes",
    "Link two notes of this project: from -relation-> to.",
    idempotent=True,  # linking the same pair again is a no-op that says so
)(_link_notes)


@tool(
    "Mark irrelevant",
    "Say a note does not answer a query: searches close to that query skip it from now on.",
)
async def mark_irrelevant(
    note_id: str, query: str, ctx: Context[Any, Any]
) -> Annotated[CallToolResult, MarkedIrrelevant]:
    rt, here = await session(ctx)
    lineage, q = await search.mark_irrelevant(rt, here, note_id, query)
    return result(
        f"Noted: n_{lineage} will be left out of searches like {q!r} (other searches still find it).",
        {"id": ids.note(lineage), "query": q},
    )
