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

from dataclasses import asdict
from datetime import datetime
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.core import advice, validate
from lore.core.injection import Injection
from lore.core.rows import Fact
from lore.http.api_routes import Body, Resolver, Route, posted
from lore.service import handoffs, log, memory, tidy, wire
from lore.service.runtime import Runtime


def register(route: Route, state: Runtime, body: Body, resolve: Resolver) -> None:
    @route("/api/facts", ["GET", "POST"])
    async def fact_list(request: Request) -> Response:
        if request.method == "POST":
            data, session = await posted(request, body, resolve)
            done = await state.call(
                memory.remember_fact,
                session,
                data.get("statement"),
                supersedes=data.get("supersedes"),
                allow_secret=data.get("allow_secret") is True,
                **_fields(data),
            )
            # 201 for a new fact; 200 with the existing one when it was already remembered.
            return JSONResponse(
                {
                    "fact": _fact(done.item),
                    "message": done.text(advice.caller_of(data.get("caller"))),
                    **done.structured(),
                },
                status_code=200 if done.duplicate else 201,
            )
        session = await resolve(request, "api", None)
        params = request.query_params
        found = await state.call(
            memory.recall,
            session,
            subject=params.get("subject"),
            as_of=params.get("as_of"),
            valid_at=params.get("valid_at"),
        )
        used = None
        if params.get("usage") in ("1", "true"):
            used = await state.call(log.usage, session.readable, [f.id for f in found.facts])
        return JSONResponse(wire.recalled(found, session.space, used))

    @route("/api/facts/{id}", ["GET"])
    async def fact_history(request: Request) -> Response:
        session = await resolve(request, "api", None)
        versions = await state.call(memory.fact_history, session.readable, request.path_params["id"])
        merged = await state.call(tidy.merged_into, session.readable, request.path_params["id"])
        return JSONResponse(
            {"id": versions[0].id, "versions": [_fact(v) for v in versions], "merged": wire.merged(merged)}
        )

    @route("/api/facts/{id}/revise", ["POST"])
    async def fact_revise(request: Request) -> Response:
        data, session = await posted(request, body, resolve)
        # What is absent stays as it is; a revision that changes nothing is the store's to refuse.
        _, new = await state.call(
            memory.revise_fact,
            session,
            request.path_params["id"],
            statement=data.get("statement"),
            allow_secret=data.get("allow_secret") is True,
            **_fields(data),
        )
        return JSONResponse({"fact": _fact(new)})

    @route("/api/facts/{id}/forget", ["POST"])
    async def fact_forget(request: Request) -> Response:
        data, session = await posted(request, body, resolve)
        old = await state.call(
            memory.forget, session, _fact_id(request.path_params["id"]), data.get("reason")
        )
        return JSONResponse({"forgotten": old.id})

    @route("/api/log", ["GET"])
    async def injection_log(request: Request) -> Response:
        """What lore told the caller's agents (the caller's own spaces, and their records that no space
        could be chosen for), newest first."""
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
        return JSONResponse({"spaces": list(config.ids), "records": [_record(r, named) for r in rows]})

    @route("/api/log/{id}", ["GET"])
    async def injection_record(request: Request) -> Response:
        config, _env, _prefix = await state.scope()
        row = await state.call(log.get, config.ids, request.path_params["id"], state.user())
        named = await state.call(handoffs.public_ids, config.ids, [row.handoff])
        return JSONResponse({"record": _record(row, named)})


def _fields(data: dict[str, Any]) -> dict[str, Any]:
    """A fact body's `subject`, `valid_from` and `valid_to` as given (None where absent): the same
    keywords for remember and revise, checked by lore.service.memory."""
    return {key: data.get(key) for key in ("subject", "valid_from", "valid_to")}


def _fact_id(value: str) -> str:
    """/api/facts/{id}/forget forgets facts only (an n_ id is refused, as before)."""
    validate.item_id(value, expect="f")
    return value


def _record(row: Injection, named: dict[int, str]) -> dict[str, Any]:
    """A record as JSON; its handoff by the handoff's public id (`n_N`, its note's), as shown everywhere."""
    return wire.injection(row, named)


def _fact(fact: Fact) -> dict[str, Any]:
    return {
        key: (value.isoformat() if isinstance(value, datetime) else value)
        for key, value in {"id": fact.id, **asdict(fact)}.items()
    }
