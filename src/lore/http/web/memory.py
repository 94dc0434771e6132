"""Pages: Facts (current facts of a space, each with its history on both time axes; revise, forget)
and Notes (the same hybrid search as `search_notes`; a note with its graph neighbourhood; edit, link,
forget). Every read and write is a use case of lore.service (the same as the MCP tools'), acting
from the item's own space with `web` as the client."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lore.core import advice, ids, injection, ranking, render, validate
from lore.core.rows import Fact, Note
from lore.core.session import Acting
from lore.core.timeline import parse_time
from lore.http.web import svg
from lore.service import log, memory, overview, search, tidy

if TYPE_CHECKING:
    from lore.http.web.app import UI, Page, Viewer

DONE = {
    "revised": "Revised: the old version stays in the history.",
    "forgotten": "Forgotten (kept in the audit trail).",
    "edited": "Saved a new version of the note.",
    "linked": "Linked.",
    "exists": "Those notes were linked already.",
}


def spans(versions: list[Fact], forgotten: bool) -> list[svg.Span]:
    out = []
    for i, v in enumerate(versions):
        last = i == len(versions) - 1
        state = (
            "current" if v.superseded_at is None else ("forgotten" if last and forgotten else "superseded")
        )
        label = f"v{i + 1} · {v.statement}"
        out.append(svg.Span(label, v.recorded_at, v.superseded_at, v.valid_from, v.valid_to, state))
    return out


def line(fact: Fact) -> str:
    """The renderer's line for a fact (what agents read), without its list dash."""
    return render.fact_line(fact).removeprefix("- ")


async def facts_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    space_id = await ui.shown_space(request, viewer)
    found = await ui.state.call(memory.space_facts, space_id)
    gone = await ui.state.call(overview.forgotten, [space_id], kind="fact")
    now = datetime.now(UTC)
    items = [
        {
            "fact": f,
            "versions": found.history[f.lineage],
            "timeline": svg.timeline(spans(found.history[f.lineage], False), now),
        }
        for f in found.facts
    ]
    return ui.space_page(
        request, viewer, "facts.html", space_id, DONE, items=items, total=found.total, forgotten=gone
    )


def acting(viewer: Viewer, space: str) -> Acting:
    """The person, acting in `space` (an item's own), reading what they may read."""
    return Acting(viewer.origin(space), tuple(viewer.ids))


async def fact_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    versions = await ui.state.call(memory.fact_history, viewer.ids, request.path_params["id"])
    space, lineage = versions[-1].space, versions[-1].lineage
    gone = await ui.state.call(overview.forgotten, [space], kind="fact", lineage=lineage)
    current = versions[-1] if versions[-1].superseded_at is None else None
    used = await ui.state.call(log.usage, viewer.ids, [versions[-1].id])
    merged = await ui.state.call(tidy.merged_into, viewer.ids, versions[-1].id)
    said, found = _said(request.query_params)
    checked = None
    if said is not None:
        named = await ui.state.call(
            memory.current_facts, viewer.ids, [int(x[2:]) for xs in found.values() for x in xs]
        )
        listed = {k: [named[int(x[2:])] for x in xs if int(x[2:]) in named] for k, xs in found.items()}
        checked = advice.remembered(
            versions[-1],
            duplicate=said == "duplicate",
            caller=advice.WEB,
            **listed,
        )
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
        usage=injection.usage_line(used.get(versions[-1].id), datetime.now(UTC)),
        merged=merged,
        checked=checked,
    )


async def fact_add(ui: UI, request: Request, viewer: Viewer) -> Response:
    """Remember a fact from the Facts page: the same write-time check as every entry point; the
    fact's page then says what it found (a copy, near duplicates, a likely conflict)."""
    space_id = viewer.space_id(request.query_params.get("space"))
    form = await ui.form(request)
    done = await ui.state.call(
        memory.remember_fact,
        acting(viewer, space_id),
        form.get("statement"),
        subject=form.get("subject") or None,
    )
    found = {
        "similar": done.similar,
        "conflicts": done.conflicts,
        "likely": done.likely,
        "replaces": done.replaces,
    }
    found_ids = "".join(f"&{k}={','.join(x.id for x in v)}" for k, v in found.items() if v)
    said = "duplicate" if done.duplicate else "remembered"
    return RedirectResponse(f"/facts/{done.id}?said={said}{found_ids}", 303)


NAMED = ("similar", "conflicts", "likely", "replaces")  # what the check names, as the URL carries it


def _said(params: Mapping[str, str]) -> tuple[str | None, dict[str, list[str]]]:
    """What a fact's page says after the add form: `said` and the ids the check named, by kind
    (checked ids only: the page fetches and quotes the facts themselves, never text from the URL)."""
    said = params.get("said")
    if said not in ("duplicate", "remembered"):
        return None, {}

    def ids_of(key: str) -> list[str]:
        return [x for x in params.get(key, "").split(",")[:10] if ids.match(x, "f")]

    return said, {key: ids_of(key) for key in NAMED}


async def fact_revise(ui: UI, request: Request, viewer: Viewer) -> Response:
    versions = await ui.state.call(memory.fact_history, viewer.ids, request.path_params["id"])
    old = versions[-1]
    form = await ui.form(request)
    start: object = form.get("valid_from", "")
    end: object = form.get("valid_to", "")
    # The form shows times to the second: the same instant sent back is no change.
    if _same_instant(start, old.valid_from):
        start = None
    if old.valid_to is not None and _same_instant(end, old.valid_to):
        end = None
    await ui.state.call(
        memory.revise_fact,
        acting(viewer, old.space),
        old.id,
        statement=form.get("statement"),
        subject=form.get("subject") or None,
        valid_from=start,
        valid_to=end,
    )
    return RedirectResponse(f"/facts/{old.id}?done=revised", 303)


def _same_instant(value: object, then: datetime) -> bool:
    given = parse_time(value, "valid time")
    return given is not None and abs(given - then) < timedelta(seconds=1)


async def fact_forget(ui: UI, request: Request, viewer: Viewer) -> Response:
    versions = await ui.state.call(memory.fact_history, viewer.ids, request.path_params["id"])
    old = versions[-1]
    form = await ui.form(request)
    await ui.state.call(memory.forget, acting(viewer, old.space), old.id, form.get("reason"))
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
    hits: list[ranking.Hit] = []
    explanation: search.Explanation | None = None
    if query and params.get("explain"):  # the same search, traced (`lore search --explain`)
        explanation = await search.explain(
            ui.state, spaces, query, session_space=spaces[0] if chosen else "", kinds=kinds, limit=20
        )
        hits = explanation.hits
    elif query:
        # The same search as search_notes: both halves at once, fusion, the similarity floor.
        hits = await search.search_notes(
            ui.state, spaces, query, session_space=spaces[0] if chosen else "", kinds=kinds, limit=20
        )
    older = 0
    if query:
        shown = await ui.state.call(memory.current_notes, spaces, [int(h.id[2:]) for h in hits])
        recent: list[Note] = []
    else:
        recent = await ui.state.call(memory.recent_notes, spaces, kinds=kinds)
        shown = {n.lineage: n for n in recent}
        if kind != "handoff":
            older = await ui.state.call(memory.older_handoffs, spaces)
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
        recent=recent,
        explanation=explanation,
        older_handoffs=older,
        handoffs_listed=memory.HANDOFFS_LISTED,
    )


async def note_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await ui.state.call(memory.note, viewer.ids, request.path_params["id"])
    around = await ui.state.call(search.neighbourhood, viewer.ids, note)
    used = await ui.state.call(log.usage, viewer.ids, [note.id])
    arcs = [
        svg.Arc(
            e.to_note if e.from_note == note.lineage else e.from_note, e.relation, e.from_note == note.lineage
        )
        for e in around.edges
    ]
    neighbours = around.neighbours
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
        versions=around.versions,
        graph=svg.neighbourhood(center, nodes, arcs),
        links=links,
        kinds=validate.NOTE_KINDS,
        relations=validate.RELATIONS,
        usage=injection.usage_line(used.get(note.id), datetime.now(UTC)),
    )


def _first_words(body: str) -> str:
    return ranking.snippet_of(body, 6)


async def note_edit(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await ui.state.call(memory.note, viewer.ids, request.path_params["id"])
    form = await ui.form(request)
    tags = [t for t in str(form.get("tags", "")).split(",") if t.strip()]
    await ui.state.call(
        memory.revise_note,
        acting(viewer, note.space),
        note.id,
        body=form.get("body"),
        kind=form.get("kind"),
        title=form.get("title") or None,
        tags=tags,
    )
    return RedirectResponse(f"/notes/{note.id}?done=edited", 303)


async def note_link(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await ui.state.call(memory.note, viewer.ids, request.path_params["id"])
    form = await ui.form(request)
    other = str(form.get("other", "")).strip()
    source, target = (note.id, other) if form.get("direction") != "incoming" else (other, note.id)
    edge = await ui.state.call(
        search.link_notes, acting(viewer, note.space), source, form.get("relation"), target
    )
    return RedirectResponse(f"/notes/{note.id}?done={'linked' if edge.created else 'exists'}", 303)


async def note_forget(ui: UI, request: Request, viewer: Viewer) -> Response:
    note = await ui.state.call(memory.note, viewer.ids, request.path_params["id"])
    form = await ui.form(request)
    await ui.state.call(memory.forget, acting(viewer, note.space), note.id, form.get("reason"))
    return RedirectResponse(f"/notes?space={viewer.name(note.space)}&done=forgotten", 303)


ROUTES: list[tuple[str, Page, list[str]]] = [
    ("/facts", facts_page, ["GET"]),
    ("/facts/add", fact_add, ["POST"]),
    ("/facts/{id}", fact_page, ["GET"]),
    ("/facts/{id}/revise", fact_revise, ["POST"]),
    ("/facts/{id}/forget", fact_forget, ["POST"]),
    ("/notes", notes_page, ["GET"]),
    ("/notes/{id}", note_page, ["GET"]),
    ("/notes/{id}/edit", note_edit, ["POST"]),
    ("/notes/{id}/link", note_link, ["POST"]),
    ("/notes/{id}/forget", note_forget, ["POST"]),
]
