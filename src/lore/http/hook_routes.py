"""The hosted hooks' routes under `/api/hooks` (docs/design.md, Agent events): each calls the same use
case as the local hook (lore.service.events, through lore.service.session_start), with the space the
server resolves from the workspace, never one the caller names. What the agent reads comes back as
`text` with the outcome: a config error or a tie is an answer the agent reads (and a record here),
not a failure of the request.

    POST /api/hooks/session-start  {workspace, root?, name?, remotes?, client, session_id?}
    POST /api/hooks/prompt         {workspace, ..., client, session_id?, seen: {message, task}}
    POST /api/hooks/session-end    {workspace, ..., client, ending: {session_id, event, message, ...}}
    POST /api/hooks/replay         {kind: "record" | "handoff", payload}: a write the hook's spool kept
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.core import outcomes
from lore.core.ending import from_wire
from lore.core.errors import InvalidInput, LoreError
from lore.core.session import SessionContext
from lore.http.api_routes import Routes, body, runtime, session
from lore.service import session_start as events


async def _where(
    request: Request, data: dict[str, Any], client: str, event: str
) -> SessionContext | Response:
    """The session the workspace resolves to; or, when no space can be chosen for it (a config
    error, a tie), the answer saying so: the agent's line, and its record here."""
    given = data.get("remotes")
    remotes = ",".join(r for r in given if isinstance(r, str))[:2000] if isinstance(given, list) else None
    try:
        resolved = await session(request, client, data.get("workspace"), remotes or None)
    except InvalidInput:
        raise
    except LoreError as exc:
        return await _unresolved(request, data, event, client, exc)
    return events.with_root(resolved, data.get("root"), data.get("name"))


async def _unresolved(
    request: Request, data: dict[str, Any], event: str, client: str, exc: LoreError
) -> Response:
    state = runtime(request)
    outcome = outcomes.of_error(exc)
    text = outcomes.agent_line(outcome) if event != "session-end" else ""
    row = events.outcome_row(
        event,
        outcome,
        client=client,
        workspace=str(data.get("workspace") or "")[:4096],
        via="api",
        session_id=_session_id(data),
        text=text,
    )
    row["owner"] = state.user()
    await state.call(events.record, row)
    return JSONResponse({"text": text, "outcome": outcome.kind, "why": outcome.why, "space": None})


async def hook_session_start(request: Request) -> Response:
    data = await body(request)
    client = events.client_of(data.get("client"))
    where = await _where(request, data, client, "session-start")
    if isinstance(where, Response):
        return where
    got = await runtime(request).call(
        events.session_start, where, client, via="api", session_id=_session_id(data)
    )
    return JSONResponse(
        {
            "text": got.text,
            "outcome": got.outcome.kind,
            "space": where.space,
            "shown": got.rendered.shown,
            "omitted": got.rendered.omitted,
            "record": got.record,
        }
    )


async def hook_prompt(request: Request) -> Response:
    data = await body(request)
    client = events.client_of(data.get("client"))
    given = data.get("seen")
    marks: dict[str, Any] = given if isinstance(given, dict) else {}
    seen = events.Seen(_mark(marks.get("message")), _mark(marks.get("task")))
    where = await _where(request, data, client, "prompt")
    if isinstance(where, Response):
        return where
    got = await runtime(request).call(
        events.prompted, where, client, seen, via="api", session_id=_session_id(data)
    )
    return JSONResponse(
        {
            "text": got.text,
            "outcome": got.outcome.kind,
            "space": where.space,
            "seen": {"message": got.seen.message, "task": got.seen.task},
            "record": got.record,
        }
    )


async def _end(request: Request, data: dict[str, Any]) -> Response:
    client = events.client_of(data.get("client"))
    ending = data.get("ending")
    if not isinstance(ending, dict):
        raise InvalidInput(
            "no `ending`: what the session end captured", "send what `lore hook session-end` sends"
        )
    captured = from_wire(ending, client)
    where = await _where(request, data, client, "session-end")
    if isinstance(where, Response):
        return where
    saved = await runtime(request).call(events.ended, where, captured)
    return JSONResponse(
        {"outcome": "stored", "space": where.space, "note_id": saved.note_id, "events": saved.events}
    )


async def hook_session_end(request: Request) -> Response:
    return await _end(request, await body(request))


async def hook_replay(request: Request) -> Response:
    data = await body(request)
    payload = data.get("payload")
    if not isinstance(payload, dict):
        raise InvalidInput("no `payload`: the write the spool kept", "send what the hook's spool holds")
    if data.get("kind") == "handoff":
        return await _end(request, payload)
    if data.get("kind") != "record":
        raise InvalidInput("`kind` must be record or handoff", "send what the hook's spool holds")
    state = runtime(request)
    config, _env, _prefix = await state.scope()
    row = events.replayed_row(payload, config.ids, state.user())
    return JSONResponse({"outcome": "stored", "record": await state.call(events.record, row)})


ROUTES: Routes = [
    ("/api/hooks/session-start", hook_session_start, ["POST"]),
    ("/api/hooks/prompt", hook_prompt, ["POST"]),
    ("/api/hooks/session-end", hook_session_end, ["POST"]),
    ("/api/hooks/replay", hook_replay, ["POST"]),
]


def _session_id(data: dict[str, Any]) -> str | None:
    value = data.get("session_id")
    return value[:200] if isinstance(value, str) and value else None


def _mark(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62 else 0
