"""Pages: Facts (current facts of a space, each with its history on both time axes; revise, forget)
and Notes (the same hybrid search as `search_notes`; a note with its graph neighbourhood; edit, link,
forget). Each page reads through one use case of lore.service.pages and each form writes through one
of lore.service.forms (or memory.remember_fact), each in one transaction: made of the same use cases
as the MCP tools', acting from the item's own space with `web` as the client."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lore.core import advice, ids, injection, ranking, render, validate
from lore.core.rows import Fact, Note
from lore.http.web import svg
from lore.service import forms, memory, pages

if TYPE_CHECKING:
    from lore.http.web.app import UI, Viewer

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
    page = await ui.state.call(pages.facts, ui.pick(request, viewer))
    found, now = page.shown.found, datetime.now(UTC)
    items = [
        {
            "fact": f,
            "versions": found.history[f.lineage],
            "timeline": svg.timeline(spans(found.history[f.lineage], False), now),
        }
        for f in found.facts
    ]
    return ui.space_page(
        request,
        viewer,
        "facts.html",
        page.space,
        DONE,
        items=items,
        total=found.total,
        forgotten=page.shown.forgotten,
    )


async def fact_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    said, found = _said(request.query_params)
    asked = [int(x[2:]) for xs in found.values() for x in xs]
    page = await ui.state.call(pages.fact, viewer.ids, request.path_params["id"], asked)
    versions, gone = page.versions, page.forgotten
    space = versions[-1].space
    current = versions[-1] if versions[-1].superseded_at is None else None
    checked = None
    if said is not None:
        named = page.named
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
        usage=injection.usage_line(page.usage, datetime.now(UTC)),
        merged=page.merged,
        checked=checked,
    )


async def fact_add(ui: UI, request: Request, viewer: Viewer) -> Response:
    """Remember a fact from the Facts page: the same write-time check as every entry point; the
    fact's page then says what it found (a copy, near duplicates, a likely conflict)."""
    space_id = viewer.space_id(request.query_params.get("space"))
    form = await ui.form(request)
    done = await ui.state.call(
        memory.remember_fact,
        viewer.person.acting(space_id),
        form.get("statement"),
        subject=form.get("subject") or None,
    )
    named = done.named()
    found: tuple[tuple[str, Sequence[Fact | Note]], ...] = (
        ("similar", named["similar"]),
        ("conflicts", named["conflicts"]),
        ("likely", named["likely"]),
        ("replaces", named["replaces"]),
    )
    found_ids = "".join(f"&{k}={','.join(x.id for x in v)}" for k, v in found if v)
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
    form = await ui.form(request)
    fields = {
        "statement": form.get("statement"),
        "subject": form.get("subject") or None,
        "valid_from": form.get("valid_from", ""),
        "valid_to": form.get("valid_to", ""),
    }
    return await _new_version(ui, request, viewer, forms.revise_fact, fields, "revised")


async def _new_version(
    ui: UI,
    request: Request,
    viewer: Viewer,
    use_case: Callable[..., Fact | Note],
    fields: Mapping[str, object],
    done: str,
) -> Response:
    """An item's edit form (a use case of lore.service.forms); then the item's page, saying `done`."""
    old = await ui.state.call(use_case, viewer.person, request.path_params["id"], **fields)
    return RedirectResponse(f"/{'facts' if isinstance(old, Fact) else 'notes'}/{old.id}?done={done}", 303)


async def fact_forget(ui: UI, request: Request, viewer: Viewer) -> Response:
    return await _forget(ui, request, viewer, "f", "/facts")


async def _forget(ui: UI, request: Request, viewer: Viewer, expect: str, listing: str) -> Response:
    """A fact's or a note's forget form; then the list of its space."""
    form = await ui.form(request)
    gone = await ui.state.call(
        forms.forget, viewer.person, request.path_params["id"], form.get("reason"), expect=expect
    )
    return RedirectResponse(f"{listing}?space={viewer.name(gone.space)}&done=forgotten", 303)


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
    # The same search as search_notes (`explain`: traced, as `lore search --explain` does).
    found = await pages.notes(
        ui.state,
        spaces,
        query,
        kinds=kinds,
        session_space=spaces[0] if chosen else "",
        explain=bool(query and params.get("explain")),
        older=kind != "handoff",
    )
    shown = found.shown
    return ui.page(
        request,
        viewer,
        "notes.html",
        flash=DONE,
        space=chosen,
        query=query,
        kind=kind or "",
        kinds=validate.SEARCH_KINDS,
        hits=[(h, shown.get(int(h.id[2:])), highlight(h.snippet)) for h in found.hits],
        recent=found.recent,
        explanation=found.explanation,
        older_handoffs=found.older_handoffs,
        handoffs_listed=memory.HANDOFFS_LISTED,
    )


async def note_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    page = await ui.state.call(pages.note, viewer.ids, request.path_params["id"])
    note, around = page.note, page.around
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
        usage=injection.usage_line(page.usage, datetime.now(UTC)),
    )


def _first_words(body: str) -> str:
    return ranking.snippet_of(body, 6)


async def note_edit(ui: UI, request: Request, viewer: Viewer) -> Response:
    form = await ui.form(request)
    fields = {
        "body": form.get("body"),
        "kind": form.get("kind"),
        "title": form.get("title") or None,
        "tags": [t for t in str(form.get("tags", "")).split(",") if t.strip()],
    }
    return await _new_version(ui, request, viewer, forms.edit_note, fields, "edited")


async def note_link(ui: UI, request: Request, viewer: Viewer) -> Response:
    form = await ui.form(request)
    note, edge = await ui.state.call(
        forms.link_note,
        viewer.person,
        request.path_params["id"],
        form.get("relation"),
        str(form.get("other", "")).strip(),
        incoming=form.get("direction") == "incoming",
    )
    return RedirectResponse(f"/notes/{note.id}?done={'linked' if edge.created else 'exists'}", 303)


async def note_forget(ui: UI, request: Request, viewer: Viewer) -> Response:
    return await _forget(ui, request, viewer, "n", "/notes")
