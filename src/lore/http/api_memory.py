"""`/api` routes for what the command line reads and curates on a server (lore.cli.gateway): notes,
search, the last handoff, tidy. Each calls the same use case as the local command, with the session
the server resolves from the caller's workspace and config (another user's ids answer "not found", as
everywhere), and answers in lore.service.wire's shapes.

    POST /api/notes                  {"body", "kind"?, "title"?, "tags"?, "when"?, "allow_secret"?}: 201,
                                     or 200 with the copy already there; "when": when it happened
                                     (ISO 8601; default now)
    GET  /api/search?q=&kind=&limit= the hits, and every candidate with its fate (`lore search --explain`)
    GET  /api/handoff?workspace=     the last session's handoff here, in full
    GET  /api/tidy?workspace=        near duplicates, likely conflicts, stale items, recent acts
    POST /api/tidy/{act}             merge {"into", "others", "statement"?}, keep {"ids"},
                                     forget {"ids", "reason"?}, undo {"action"}, redo {"action"}
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.core import advice
from lore.core.errors import InvalidInput
from lore.http.api_routes import Routes, lore, posted, runtime, session
from lore.service import handoffs, memory, search, tidy, wire

MAX_IDS = 100


async def note_add(request: Request) -> Response:
    data, here = await posted(request)
    tags = data.get("tags")
    done = await runtime(request).call(
        memory.remember_note,
        here,
        data.get("body"),
        kind=data.get("kind") or "note",
        title=data.get("title"),
        tags=tags if isinstance(tags, list) else None,
        allow_secret=data.get("allow_secret") is True,
        when=data.get("when"),
    )
    return JSONResponse(
        wire.remembered(done, "note", advice.caller_of(data.get("caller"))),
        status_code=200 if done.duplicate else 201,
    )


async def search_notes(request: Request) -> Response:
    here = await session(request)
    params = request.query_params
    state = runtime(request)
    config, _env, _prefix = await state.scope()
    limit = params.get("limit", "5")
    found = await search.explain(
        state,
        here.readable,
        params.get("q", ""),
        session_space=here.space,
        others=config.ids,
        kinds=params.getlist("kind") or None,
        limit=int(limit) if limit.isdigit() else limit,
    )
    return JSONResponse(wire.explanation(found, here.space))


async def handoff_here(request: Request) -> Response:
    here = await session(request)
    found = await runtime(request).call(handoffs.last_here, here)
    return JSONResponse(wire.handoff(here, found.text))


async def tidy_list(request: Request) -> Response:
    here = await session(request)
    # Paths in sign-in mode name the user's machine, not this one: not checked here.
    check_paths = not lore(request).sign_in
    found = await runtime(request).call(tidy.report, here.space, here=str(here.root), check_paths=check_paths)
    return JSONResponse(wire.tidy_report(found))


async def tidy_act(request: Request) -> Response:
    data, here = await posted(request)
    act = request.path_params["act"]
    listed = act in ("merge", "keep", "forget")  # the acts on items; undo and redo name an action
    items = _ids(data.get("others" if act == "merge" else "ids")) if listed else []
    done = await runtime(request).call(tidy.act, here, act, items=items, **tidy.fields(data))
    if done is None:
        raise InvalidInput(f"no tidy act {act[:20]!r}", "use merge, keep, forget, undo or redo")
    return JSONResponse(wire.tidied_act(done))


ROUTES: Routes = [
    ("/api/notes", note_add, ["POST"]),
    ("/api/search", search_notes, ["GET"]),
    ("/api/handoff", handoff_here, ["GET"]),
    ("/api/tidy", tidy_list, ["GET"]),
    ("/api/tidy/{act}", tidy_act, ["POST"]),
]


def _ids(value: object) -> list[object]:
    if not isinstance(value, list) or len(value) > MAX_IDS:
        raise InvalidInput(f"send the ids as a list of at most {MAX_IDS}", 'e.g. {"ids": ["f_4", "f_5"]}')
    return value
