"""Pages: Facts (current facts of a space, each with its history on both time axes; revise, forget)
and Notes (the same hybrid search as `search_notes`; a note with its graph neighbourhood; edit, link,
forget). Writes go through the same core functions as the MCP tools, from the item's own space, with
`web` as the client."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import psycopg
from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lore.core import render, validate
from lore.core.errors import InvalidInput, NotFound
from lore.core.timeline import parse_time
from lore.http.web import svg
from lore.service import retrieval
from lore.store import facts, graph, notes, overview, search

if TYPE_CHECKING:
    from lore.http.web.app import UI, Page, Viewer

MAX_FACTS = 300
DONE = {
    "revised": "Revised: the old version stays in the history.",
    "forgotten": "Forgotten (kept in the audit trail).",
    "edited": "Saved a new version of the note.",
    "linked": "Linked.",
    "exists": "Those notes were linked already.",
}


def spans(versions: list[facts.Fact], forgotten: bool) -> list[svg.Span]:
    out = []
    for i, v in enumerate(versions):
        last = i == len(versions) - 1
        state = (
            "current" if v.superseded_at is None else ("forgotten" if last and forgotten else "superseded")
        )
        label = f"v{i + 1} · {v.statement}"
        out.append(svg.Span(label, v.recorded_at, v.superseded_at, v.valid_from, v.valid_to, state))
    return out


def line(fact: facts.Fact) -> str:
    """The renderer's line for a fact (what agents read), without its list dash."""
    return render.fact_line(fact).removeprefix("- ")


async def facts_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    named = request.query_params.get("space")
    ids = list(viewer.ids)
    # No space named: the one the person's agents wrote to last (else the default space).
    recent = None if named or len(ids) < 2 else await ui.state.run(lambda c: overview.last_used(c, ids))
    space_id = recent or viewer.space_id(named)

    def load(
        conn: psycopg.Connection,
    ) -> tuple[list[facts.Fact], int, dict[int, list[facts.Fact]], list[Any]]:
        rows, total = facts.page(conn, [space_id], limit=MAX_FACTS)
        history = {f.lineage: facts.history(conn, [space_id], f.lineage) for f in rows}
        return rows, total, history, overview.forgotten(conn, [space_id], kind="fact")

    rows, total, history, gone = await ui.state.run(load)
    now = datetime.now(UTC)
    items = [
        {
            "fact": f,
            "line": line(f),
            "versions": history[f.lineage],
            "timeline": svg.timeline(spans(history[f.lineage], False), now),
        }
        for f in rows
    ]
    return ui.space_page(
        request, viewer, "facts.html", space_id, DONE, items=items, total=total, forgotten=gone
    )


async def _versions(ui: UI, viewer: Viewer, raw_id: str) -> tuple[int, list[facts.Fact]]:
    _, lineage = validate.item_id(raw_id, expect="f")
    versions = await ui.state.run(lambda c: facts.history(c, viewer.ids, lineage))
    if not versions:
        raise NotFound(f"No fact f_{lineage} in your spaces.", "The Facts page lists them.")
    return lineage, versions


async def fact_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    lineage, versions = await _versions(ui, viewer, request.path_params["id"])
    space = versions[-1].space
    gone = await ui.state.run(lambda c: overview.forgotten(c, [space], kind="fact", lineage=lineage))
    current = versions[-1] if versions[-1].superseded_at is None else None
    return ui.page(
        request,
        viewer,
        "fact.html",
        flash=DONE,
        fact=versions[-1],
        current=current,
        versions=versions,
        line=line(versions[-1]),
        space=viewer.name(space),
        forgotten=gone,
        timeline=svg.timeline(spans(versions, bool(gone)), datetime.now(UTC)),
    )


async def fact_revise(ui: UI, request: Request, viewer: Viewer) -> Response:
    lineage, versions = await _versions(ui, viewer, request.path_params["id"])
    old = versions[-1]
    form = await ui.form(request)
    text = validate.statement(form.get("statement"))
    subject = validate.optional(form.get("subject") or None, "subject", validate.MAX_SUBJECT)
    start = parse_time(str(form.get("valid_from", "")), "valid_from")
    end = parse_time(str(form.get("valid_to", "")), "valid_to")
    # The form shows times to the second: the same instant sent back is no change.
    start = None if start is not None and abs(start - old.valid_from) < timedelta(seconds=1) else start
    if end is not None and old.valid_to is not None and abs(end - old.valid_to) < timedelta(seconds=1):
        end = None
    await ui.state.run(
        lambda c: facts.revise(
            c,
            viewer.origin(old.space),
            viewer.ids,
            lineage,
            statement=text,
            subject=subject,
            valid_from=start,
            valid_to=end,
        )
    )
    return RedirectResponse(f"/facts/f_{lineage}?done=revised", 303)


async def fact_forget(ui: UI, request: Request, viewer: Viewer) -> Response:
    lineage, versions = await _versions(ui, viewer, request.path_params["id"])
    form = await ui.form(request)
    reason = validate.text(form.get("reason"), "reason", max_chars=validate.MAX_REASON)
    assert reason is not None
    old = versions[-1]
    await ui.state.run(lambda c: facts.forget(c, viewer.origin(old.space), viewer.ids, lineage, reason))
    return RedirectResponse(f"/facts?space={viewer.name(old.space)}&done=forgotten", 303)


# --- notes --------------------------------------------------------------------------------------


def highlight(snippet: str) -> Markup:
    """A search snippet, escaped, with the words the search matched (between « ») marked."""
    return Markup(str(escape(snippet)).replace("«", "<mark>").replace("»", "</mark>"))


async def notes_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    params = request.query_params
    chosen = params.get("space", "")
    spaces = [viewer.space_id(chosen)] if chosen else list(viewer.ids)
    query = params.get("q", "").strip()
    kind = params.get("kind") or None
    kinds = [validate.search_kind(kind)] if kind else None
    hits: list[search.Hit] = []
    if query:
        q = validate.text(query, "query", max_chars=1000)
        assert q is not None
        # The same core as search_notes: both halves at once, fusion, the similarity floor.
        hits = await retrieval.find(
            ui.state, spaces, q, session_space=spaces[0] if chosen else "", kinds=kinds, limit=20
        )
    lineages = [int(h.id[2:]) for h in hits]
    shown = await ui.state.run(
        lambda c: (
            notes.current(c, spaces, lineages)
            if query
            else {n.lineage: n for n in notes.recent(c, spaces, kinds=kinds, limit=100)}
        )
    )
    return ui.page(
        request,
        viewer,
        "notes.html",
        flash=DONE,
        space=chosen,
        query=query,
        kind=kind or "",
        kinds=validate.SEARCH_KINDS,
        hits=[(h, shown.get(int(h.id[2:])), highlight(h.snippet)) for h in hits],
        recent=[] if query else list(shown.values()),
    )


async def _note(ui: UI, viewer: Viewer, raw_id: str) -> notes.Note:
    _, lineage = validate.item_id(raw_id, expect="n")
    return await ui.state.run(lambda c: notes.get(c, viewer.ids, lineage))


async def note_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await _note(ui, viewer, request.path_params["id"])

    def load(conn: psycopg.Connection) -> tuple[list[graph.Edge], dict[int, notes.Note], list[notes.Note]]:
        edges = graph.edges_of(conn, [note.space], note.lineage)
        others = sorted({e.to_note if e.from_note == note.lineage else e.from_note for e in edges})
        return edges, notes.current(conn, viewer.ids, others), notes.history(conn, viewer.ids, note.lineage)

    edges, neighbours, versions = await ui.state.run(load)
    arcs = [
        svg.Arc(
            e.to_note if e.from_note == note.lineage else e.from_note, e.relation, e.from_note == note.lineage
        )
        for e in edges
    ]
    nodes = {
        n.lineage: svg.Node(n.lineage, n.title or _first_words(n.body), n.kind) for n in neighbours.values()
    }
    center = svg.Node(note.lineage, note.title or _first_words(note.body), note.kind)
    links = [(a, neighbours[a.other]) for a in arcs if a.other in neighbours]
    return ui.page(
        request,
        viewer,
        "note.html",
        flash=DONE,
        note=note,
        space=viewer.name(note.space),
        versions=versions,
        graph=svg.neighbourhood(center, nodes, arcs),
        links=links,
        kinds=validate.NOTE_KINDS,
        relations=graph.RELATIONS,
    )


def _first_words(body: str) -> str:
    return search.snippet_of(body, 6)


async def note_edit(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await _note(ui, viewer, request.path_params["id"])
    form = await ui.form(request)
    body = validate.body(form.get("body"))
    kind = validate.kind(form.get("kind"))
    title = validate.optional(form.get("title") or None, "title", validate.MAX_TITLE)
    tags = validate.tags([t for t in str(form.get("tags", "")).split(",") if t.strip()])
    if (body, kind, title, tags) == (note.body, note.kind, note.title, list(note.tags)):
        raise InvalidInput("Nothing changed.", "Edit the text, title, kind or tags, then save.")
    await ui.state.run(
        lambda c: notes.revise(
            c,
            viewer.origin(note.space),
            viewer.ids,
            note.lineage,
            body=body,
            kind=kind,
            title=title,
            tags=tags,
        )
    )
    retrieval.poke(ui.state)  # embedded in the background, as a note written by a tool
    return RedirectResponse(f"/notes/{note.id}?done=edited", 303)


async def note_link(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await _note(ui, viewer, request.path_params["id"])
    form = await ui.form(request)
    relation = graph.relation(form.get("relation"))
    _, other = validate.item_id(str(form.get("other", "")).strip(), expect="n")
    source, target = (note.lineage, other) if form.get("direction") != "incoming" else (other, note.lineage)
    edge = await ui.state.run(
        lambda c: graph.link(c, viewer.origin(note.space), viewer.ids, source, relation, target)
    )
    return RedirectResponse(f"/notes/{note.id}?done={'linked' if edge.created else 'exists'}", 303)


async def note_forget(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await _note(ui, viewer, request.path_params["id"])
    form = await ui.form(request)
    reason = validate.text(form.get("reason"), "reason", max_chars=validate.MAX_REASON)
    assert reason is not None
    await ui.state.run(lambda c: notes.forget(c, viewer.origin(note.space), viewer.ids, note.lineage, reason))
    return RedirectResponse(f"/notes?space={viewer.name(note.space)}&done=forgotten", 303)


ROUTES: list[tuple[str, Page, list[str]]] = [
    ("/facts", facts_page, ["GET"]),
    ("/facts/{id}", fact_page, ["GET"]),
    ("/facts/{id}/revise", fact_revise, ["POST"]),
    ("/facts/{id}/forget", fact_forget, ["POST"]),
    ("/notes", notes_page, ["GET"]),
    ("/notes/{id}", note_page, ["GET"]),
    ("/notes/{id}/edit", note_edit, ["POST"]),
    ("/notes/{id}/link", note_link, ["POST"]),
    ("/notes/{id}/forget", note_forget, ["POST"]),
]
