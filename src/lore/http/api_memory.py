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
from lore.http.api_routes import Body, Resolver, Route, posted
from lore.service import handoffs, memory, search, tidy, wire
from lore.service.runtime import Runtime

MAX_IDS = 100


def register(route: Route, state: Runtime, body: Body, resolve: Resolver, *, sign_in: bool) -> None:
    @route("/api/notes", ["POST"])
    async def note_add(request: Request) -> Response:
        data, session = await posted(request, body, resolve)
        tags = data.get("tags")
        done = await state.call(
            memory.remember_note,
            session,
            data.get("body"),
            kind=data.get("kind") or "note",
            title=data.get("title"),
            tags=tags if isinstance(tags, list) else None,
            allow_secret=data.get("allow_secret") is True,
            when=data.get("when"),
        )
        return JSONResponse(
            {
                "note": wire.row(done.item),
                "message": done.text(advice.caller_of(data.get("caller"))),
                "duplicate": done.duplicate,
            },
            status_code=200 if done.duplicate else 201,
        )

    @route("/api/search", ["GET"])
    async def search_notes(request: Request) -> Response:
        session = await resolve(request, "api", None)
        params = request.query_params
        config, _env, _prefix = await state.scope()
        limit = params.get("limit", "5")
        found = await search.explain(
            state,
            session.readable,
            params.get("q", ""),
            session_space=session.space,
            others=config.ids,
            kinds=params.getlist("kind") or None,
            limit=int(limit) if limit.isdigit() else limit,
        )
        return JSONResponse(wire.explanation(found, session.space))

    @route("/api/handoff", ["GET"])
    async def handoff_here(request: Request) -> Response:
        session = await resolve(request, "api", None)
        found = await state.call(handoffs.last_here, session)
        return JSONResponse({**wire.session(session), "text": found.text})

    @route("/api/tidy", ["GET"])
    async def tidy_list(request: Request) -> Response:
        session = await resolve(request, "api", None)
        # Paths in sign-in mode name the user's machine, not this one: not checked here.
        found = await state.call(tidy.report, session.space, here=str(session.root), check_paths=not sign_in)
        return JSONResponse(wire.tidy_report(found))

    @route("/api/tidy/{act}", ["POST"])
    async def tidy_act(request: Request) -> Response:
        data, session = await posted(request, body, resolve)
        act = request.path_params["act"]
        if act == "merge":
            done = await state.call(
                tidy.merge,
                session,
                data.get("into"),
                _ids(data.get("others")),
                statement=data.get("statement"),
            )
        elif act == "keep":
            done = await state.call(tidy.keep, session, _ids(data.get("ids")))
        elif act == "forget":
            done = await state.call(tidy.forget, session, _ids(data.get("ids")), data.get("reason"))
        elif act in ("undo", "redo"):
            done = await state.call(tidy.undo if act == "undo" else tidy.redo, session, data.get("action"))
        else:
            raise InvalidInput(f"no tidy act {act[:20]!r}", "use merge, keep, forget, undo or redo")
        return JSONResponse({"action": done.action, "text": done.text})


def _ids(value: object) -> list[object]:
    if not isinstance(value, list) or len(value) > MAX_IDS:
        raise InvalidInput(f"send the ids as a list of at most {MAX_IDS}", 'e.g. {"ids": ["f_4", "f_5"]}')
    return value
