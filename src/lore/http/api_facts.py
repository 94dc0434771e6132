"""`/api` routes for facts and for the record of what agents were told: the same use cases as the MCP
tools and `lore facts` / `lore log` (lore.service.memory, lore.service.log), in the caller's spaces.

    GET  /api/facts?workspace=[&subject&as_of&valid_at&usage=1]
    POST /api/facts                      {"statement", "subject"?, "valid_from"?, "valid_to"?, "supersedes"?}
                                         201 with the new fact, or 200 with the copy already there;
                                         the write-time check's findings in "similar", "conflicts"
    GET  /api/facts/{id}?workspace=      every version of one fact, and what was merged into it
    POST /api/facts/{id}/revise          {"statement"?, "subject"?, "valid_from"?, "valid_to"?}
                                         a new version; what is absent stays (changing nothing: 400)
    POST /api/facts/{id}/forget          {"reason"}
    GET  /api/log[?client&workspace&since&limit]   what lore told the caller's agents (their spaces,
                                         and their records no space could be chosen for)
    GET  /api/log/{id}                   one record, with the text as the agent received it
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.core import advice, validate
from lore.http.api_routes import Routes, posted, runtime, session
from lore.service import handoffs, log, memory, tidy, wire


async def fact_list(request: Request) -> Response:
    if request.method == "POST":
        return await _fact_add(request)
    here = await session(request)
    params = request.query_params
    state = runtime(request)
    found = await state.call(
        memory.recall,
        here,
        subject=params.get("subject"),
        as_of=params.get("as_of"),
        valid_at=params.get("valid_at"),
    )
    used = None
    if params.get("usage") in ("1", "true"):
        used = await state.call(log.usage, here.readable, [f.id for f in found.facts])
    return JSONResponse(wire.recalled(found, here.space, used))


async def _fact_add(request: Request) -> Response:
    data, here = await posted(request)
    done = await runtime(request).call(
        memory.remember_fact,
        here,
        data.get("statement"),
        supersedes=data.get("supersedes"),
        allow_secret=data.get("allow_secret") is True,
        **_fields(data),
    )
    # 201 for a new fact; 200 with the existing one when it was already remembered.
    return JSONResponse(
        wire.remembered(done, "fact", advice.caller_of(data.get("caller"))),
        status_code=200 if done.duplicate else 201,
    )


async def fact_history(request: Request) -> Response:
    here = await session(request)
    state, fact_id = runtime(request), request.path_params["id"]
    versions = await state.call(memory.fact_history, here.readable, fact_id)
    merged = await state.call(tidy.merged_into, here.readable, fact_id)
    return JSONResponse(wire.history(versions, merged))


async def fact_revise(request: Request) -> Response:
    data, here = await posted(request)
    # What is absent stays as it is; a revision that changes nothing is the store's to refuse.
    _, new = await runtime(request).call(
        memory.revise_fact,
        here,
        request.path_params["id"],
        statement=data.get("statement"),
        allow_secret=data.get("allow_secret") is True,
        **_fields(data),
    )
    return JSONResponse({"fact": wire.row(new)})


async def fact_forget(request: Request) -> Response:
    data, here = await posted(request)
    fact_id = _fact_id(request.path_params["id"])
    old = await runtime(request).call(memory.forget, here, fact_id, data.get("reason"))
    return JSONResponse({"forgotten": old.id})


async def injection_log(request: Request) -> Response:
    """What lore told the caller's agents (the caller's own spaces, and their records that no space
    could be chosen for), newest first."""
    state = runtime(request)
    config, _env, _prefix = await state.scope()
    params = request.query_params
    limit = params.get("limit", "20")
    rows = await state.call(
        log.recent,
        config.ids,
        client=params.get("client"),
        workspace=params.get("workspace"),
        since=params.get("since"),
        limit=int(limit) if limit.isdigit() else 0,
        owner=state.user(),
    )
    named = await state.call(handoffs.public_ids, config.ids, [r.handoff for r in rows])
    return JSONResponse(wire.records(config.ids, rows, named))


async def injection_record(request: Request) -> Response:
    state = runtime(request)
    config, _env, _prefix = await state.scope()
    row = await state.call(log.get, config.ids, request.path_params["id"], state.user())
    named = await state.call(handoffs.public_ids, config.ids, [row.handoff])
    return JSONResponse({"record": wire.injection(row, named)})


ROUTES: Routes = [
    ("/api/facts", fact_list, ["GET", "POST"]),
    ("/api/facts/{id}", fact_history, ["GET"]),
    ("/api/facts/{id}/revise", fact_revise, ["POST"]),
    ("/api/facts/{id}/forget", fact_forget, ["POST"]),
    ("/api/log", injection_log, ["GET"]),
    ("/api/log/{id}", injection_record, ["GET"]),
]


def _fields(data: dict[str, Any]) -> dict[str, Any]:
    """A fact body's `subject`, `valid_from` and `valid_to` as given (None where absent): the same
    keywords for remember and revise, checked by lore.service.memory."""
    return {key: data.get(key) for key in ("subject", "valid_from", "valid_to")}


def _fact_id(value: str) -> str:
    """/api/facts/{id}/forget forgets facts only (an n_ id is refused, as before)."""
    validate.item_id(value, expect="f")
    return value
