"""Retrieval tools: `search_notes` (one of the six core tools, registered in their order by
lore.mcp.tools), then `link_notes` and `mark_irrelevant`.

The search itself (both halves at once, fusion, the similarity floor) is lore.retrieval.find,
which the web UI calls too.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from lore.core import ids, validate
from lore.mcp.server import AppState, result
from lore.service import retrieval
from lore.store import graph, search


def _line(hit: search.Hit) -> str:
    title = f"{hit.title} — " if hit.title else ""
    why = f"linked: {hit.via}" if hit.via else hit.why
    return f"{hit.id} [{hit.kind}] {title}{hit.snippet} ({hit.score:g}, {why})"


def register_search(server: MCPServer[AppState], state: AppState) -> None:
    @server.tool(
        description=(
            "Search notes by meaning and keywords; only relevant matches, with linked notes. "
            "kinds/tags: filters; limit: 1-20."
        )
    )
    async def search_notes(
        query: str,
        ctx: Context[AppState, Any],
        kinds: list[str] | None = None,
        tags: list[str] | None = None,
        limit: int = 5,
    ) -> CallToolResult:
        q = validate.text(query, "query", max_chars=1000)
        assert q is not None
        ks = [validate.search_kind(k) for k in kinds] if kinds else None
        labels = validate.tags(tags) or None
        count = validate.limit(limit, "limit", 1, 20)
        session = await state.session(ctx)
        hits = await retrieval.find(
            state, session.readable, q, session_space=session.space, kinds=ks, tags=labels, limit=count
        )
        if not hits:
            return result(f"No notes match {q!r}.", {"results": []})
        results = [{k: v for k, v in h.__dict__.items() if v is not None} for h in hits]
        return result("\n".join(_line(h) for h in hits), {"results": results})


_LINK_SIGNATURE = inspect.Signature(
    [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=kind)
        for name, kind in (
            ("from_", Annotated[str, Field(alias="from", description="note id, e.g. n_3")]),
            ("relation", Annotated[str, Field(description="|".join(graph.RELATIONS))]),
            ("to", Annotated[str, Field(description="note id")]),
            ("ctx", Context[AppState, Any]),
        )
    ],
    return_annotation=CallToolResult,
)


def register(server: MCPServer[AppState], state: AppState) -> None:
    async def link_notes(**args: Any) -> CallToolResult:
        _, source = validate.item_id(args["from"], expect="n")
        _, target = validate.item_id(args["to"], expect="n")
        rel = graph.relation(args["relation"])
        session = await state.session(args["ctx"])
        edge = await state.run(lambda c: graph.link(c, session.origin, session.readable, source, rel, target))
        said = "Linked" if edge.created else "Already linked"
        return result(f"{said}: {edge.describe()}.", {"edge": edge.describe(), "created": edge.created})

    # `from` is a Python keyword: the tool declares it through an alias (what the schema shows).
    link_notes.__signature__ = _LINK_SIGNATURE  # type: ignore[attr-defined]
    link_notes.__annotations__ = {p.name: p.annotation for p in _LINK_SIGNATURE.parameters.values()}
    server.tool(description="Link two notes of this project: from -relation-> to.")(link_notes)

    @server.tool(
        description="Say a note does not answer a query: searches close to that query skip it from now on."
    )
    async def mark_irrelevant(note_id: str, query: str, ctx: Context[AppState, Any]) -> CallToolResult:
        _, lineage = validate.item_id(note_id, expect="n")
        q = validate.text(query, "query", max_chars=1000)
        assert q is not None
        session = await state.session(ctx)
        vector, model = await retrieval.query_vector(state, q)
        await state.run(
            lambda c: search.mark_irrelevant(
                c, session.origin, session.readable, lineage, q, vector=vector, model=model
            )
        )
        return result(
            f"Noted: n_{lineage} will be left out of searches like {q!r} (other searches still find it).",
            {"id": ids.note(lineage), "query": q},
        )
