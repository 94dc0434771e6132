"""The JSON API under `/api`: what the hosted session-start hook, `lore config push` and scripts use.

Same core as the MCP tools (space resolution, facts, the renderer); the workspace comes from the
`workspace` parameter or the `X-Lore-Workspace` header. In sign-in mode every route needs a valid
bearer token and answers 401 with the same body whatever was wrong. In local mode (loopback, no
sign-in) nothing is asked of the caller, so the browser is kept out instead:

- only requests whose Host is the loopback interface are served (no DNS rebinding);
- a request with another site's Origin, or `Origin: null` (sandboxed frames, `file:` pages), is
  refused (403): lore's own clients, curl and scripts send no Origin at all;
- a POST or PUT whose Content-Type is not `application/json` is refused (415), in both modes. A web
  page can send `text/plain` (or a form) to any address without asking, even with `mode: 'no-cors'`;
  sending `application/json` to another origin needs a CORS preflight, which this server never grants.

    GET  /api/me                         who is signed in
    GET  /api/spaces                     the user's spaces (config as resolved)
    PUT  /api/config                     {"toml", "home"}: replace the user's config (sign-in mode)
    GET  /api/session-start?workspace=&client=    the session-start text, rendered by the server
    POST /api/hooks/...                  the hosted hooks' events (lore.http.hook_routes)
    GET  /api/log[?client&since&limit]   what lore told the caller's agents (their spaces only)
    GET  /api/log/{id}                   one record, with the text as the agent received it
    GET  /api/facts?workspace=[&subject&as_of&valid_at]
    POST /api/facts                      {"statement", "subject"?, "valid_from"?, "valid_to"?, "supersedes"?}
                                         201 with the new fact, or 200 with the copy already there;
                                         the write-time check's findings in "similar", "conflicts"
    GET  /api/facts/{id}?workspace=      every version of one fact
    POST /api/facts/{id}/revise          {"statement"?, "subject"?, "valid_from"?, "valid_to"?}
                                         a new version; what is absent stays (changing nothing: 400)
    POST /api/facts/{id}/forget          {"reason"}
    POST /api/notes                      {"body", "kind"?, "title"?, "tags"?, "when"?}: 201 with the
                                         new note (200 with the copy already there); "when" is when
                                         it happened, ISO 8601 (default: now)

The checks themselves (and the status of each LoreError) live in lore.request_guard, shared with the web UI.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import datetime
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.core import local_secret, users, validate
from lore.core.errors import InvalidInput, LoreError, Refused, TooLarge
from lore.core.injection import Injection
from lore.core.rows import Fact, Note
from lore.core.session import SessionContext
from lore.http import guard, hook_routes
from lore.http.guard import foreign_origin
from lore.service import accounts, handoffs, log, memory
from lore.service.runtime import REMOTE_HEADER, WORKSPACE_HEADER, Runtime
from lore.service.session_start import client_of, session_start

Handler = Callable[[Request], Awaitable[Response]]
MAX_BODY = 512 * 1024


def unauthorized() -> Response:
    """The one answer to a missing, unknown, expired or revoked token: nothing about which. Byte for
    byte what the SDK answers on `/mcp` (json.dumps spacing included)."""
    body = {"error": "invalid_token", "error_description": "Authentication required"}
    return Response(
        json.dumps(body),
        status_code=401,
        media_type="application/json",
        headers={
            "WWW-Authenticate": 'Bearer error="invalid_token", error_description="Authentication required"'
        },
    )


def register(server: MCPServer[Any], state: Runtime, *, sign_in: bool, secret: str | None = None) -> None:
    """The routes under /api. Local mode (`sign_in` False) requires `secret`, this user's local
    secret (lore.core.local_secret), on every request."""
    assert sign_in or secret, "local mode needs the local secret"

    def route(path: str, methods: list[str]) -> Callable[[Handler], Handler]:
        def wrap(handler: Handler) -> Handler:
            async def guarded(request: Request) -> Response:
                if sign_in and not isinstance(request.scope.get("user"), AuthenticatedUser):
                    return unauthorized()
                if not sign_in and not guard.on_loopback(request):
                    return guard.off_loopback()
                given = request.headers.get("authorization")
                if not sign_in and not local_secret.matches(given, secret or ""):
                    return guard.no_local_secret(request)
                refused = _browser_refusal(request, sign_in)
                if refused is not None:
                    return refused
                try:
                    return await handler(request)
                except LoreError as exc:
                    return guard.error(exc)

            server.custom_route(path, methods=methods)(guarded)
            return guarded

        return wrap

    @route("/api/me", ["GET"])
    async def me(_: Request) -> Response:
        return JSONResponse({"user": state.user(), "mode": "sign-in" if sign_in else "local"})

    @route("/api/spaces", ["GET"])
    async def spaces(_: Request) -> Response:
        config, _env, _prefix = await state.scope()
        user = state.user()
        return JSONResponse(
            {
                "user": user,
                "default_space": config.default_space,
                "spaces": [
                    {**asdict(s), "name": users.local_name(user, s.id) if user else s.id}
                    for s in config.spaces
                ],
            }
        )

    @route("/api/config", ["PUT"])
    async def push_config(request: Request) -> Response:
        user = state.user()
        if user is None or state.accounts is None:
            raise Refused(
                "This server runs without sign-in and reads its own config file.",
                "Edit that file (`lore which` shows it); `lore config push` is for `lore serve --sign-in`.",
            )
        data = await _json(request)
        text, home = data.get("toml"), data.get("home")
        if not isinstance(text, str) or not isinstance(home, str):
            raise InvalidInput(
                'send {"toml": "<config file text>", "home": "<your HOME>"}', "use `lore config push`"
            )
        pushed = await state.call(accounts.push_config, user, text, home)
        return JSONResponse(
            {
                "user": user,
                "version": pushed.version,
                "spaces": [users.local_name(user, s) for s in pushed.config.ids],
                "ignored": list(pushed.ignored),
            }
        )

    @route("/api/session-start", ["GET"])
    async def session_start_text(request: Request) -> Response:
        client = client_of(request.query_params.get("client", "claude-code"))
        session = await _session(request, client)
        started = await state.call(
            session_start, session, client, via="api", session_id=request.query_params.get("session_id")
        )
        return JSONResponse(
            {
                "text": started.text,
                "space": session.space,
                "shown": started.rendered.shown,
                "omitted": started.rendered.omitted,
                "total": started.total,
                "record": started.record,
            }
        )

    @route("/api/facts", ["GET", "POST"])
    async def fact_list(request: Request) -> Response:
        if request.method == "POST":
            data = await _json(request)
            session = await _session(request, "api", data.get("workspace"))
            done = await state.call(
                memory.remember_fact,
                session,
                data.get("statement"),
                supersedes=data.get("supersedes"),
                **_fields(data),
            )
            # 201 for a new fact; 200 with the existing one when it was already remembered.
            return JSONResponse(
                {"fact": _fact(done.item), "message": done.text(), **done.structured()},
                status_code=200 if done.duplicate else 201,
            )
        session = await _session(request, "api")
        params = request.query_params
        found = await state.call(
            memory.recall,
            session,
            subject=params.get("subject"),
            as_of=params.get("as_of"),
            valid_at=params.get("valid_at"),
        )
        return JSONResponse(
            {"space": session.space, "total": found.total, "facts": [_fact(f) for f in found.facts]}
        )

    @route("/api/notes", ["POST"])
    async def note_add(request: Request) -> Response:
        data = await _json(request)
        session = await _session(request, "api", data.get("workspace"))
        done = await state.call(
            memory.remember_note,
            session,
            data.get("body"),
            kind=data.get("kind", "note"),
            title=data.get("title"),
            tags=data.get("tags"),
            when=data.get("when"),
        )
        return JSONResponse(
            {"note": _note(done.item), "message": done.text(), **done.structured()},
            status_code=200 if done.duplicate else 201,
        )

    @route("/api/facts/{id}", ["GET"])
    async def fact_history(request: Request) -> Response:
        session = await _session(request, "api")
        versions = await state.call(memory.fact_history, session.readable, request.path_params["id"])
        return JSONResponse({"id": versions[0].id, "versions": [_fact(v) for v in versions]})

    @route("/api/facts/{id}/revise", ["POST"])
    async def fact_revise(request: Request) -> Response:
        data = await _json(request)
        session = await _session(request, "api", data.get("workspace"))
        # What is absent stays as it is; a revision that changes nothing is the store's to refuse.
        _, new = await state.call(
            memory.revise_fact,
            session,
            request.path_params["id"],
            statement=data.get("statement"),
            **_fields(data),
        )
        return JSONResponse({"fact": _fact(new)})

    @route("/api/facts/{id}/forget", ["POST"])
    async def fact_forget(request: Request) -> Response:
        data = await _json(request)
        session = await _session(request, "api", data.get("workspace"))
        old = await state.call(
            memory.forget, session, _fact_id(request.path_params["id"]), data.get("reason")
        )
        return JSONResponse({"forgotten": old.id})

    @route("/api/log", ["GET"])
    async def injection_log(request: Request) -> Response:
        """What lore told the caller's agents (the caller's own spaces only), newest first."""
        config, _env, _prefix = await state.scope()
        params = request.query_params
        limit = params.get("limit", "20")
        rows = await state.call(
            log.recent,
            config.ids,
            client=params.get("client"),
            since=params.get("since"),
            limit=int(limit) if limit.isdigit() else 0,
        )
        named = await state.call(handoffs.public_ids, config.ids, [r.handoff for r in rows])
        return JSONResponse({"records": [_record(r, named) for r in rows]})

    @route("/api/log/{id}", ["GET"])
    async def injection_record(request: Request) -> Response:
        config, _env, _prefix = await state.scope()
        row = await state.call(log.get, config.ids, request.path_params["id"])
        named = await state.call(handoffs.public_ids, config.ids, [row.handoff])
        return JSONResponse({"record": _record(row, named)})

    hook_routes.register(route, state, _json, lambda *args: _session(*args))

    async def _session(
        request: Request, source: str, workspace: object = None, remotes: str | None = None
    ) -> SessionContext:
        value = workspace or request.query_params.get("workspace") or request.headers.get(WORKSPACE_HEADER)
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(
                "no workspace: pass ?workspace=<project dir> or the X-Lore-Workspace header",
                "name the directory the agent works in (an absolute path)",
            )
        if len(value) > 4096 or any(ord(ch) < 32 for ch in value):
            raise InvalidInput(
                "the workspace is not a directory path (over 4,096 characters, or a control character)",
                "name the directory the agent works in (an absolute path)",
            )
        remotes = remotes or request.headers.get(REMOTE_HEADER)
        return await state.session_for(value.strip(), source, "api workspace", remotes)


def _browser_refusal(request: Request, sign_in: bool) -> Response | None:
    """What a web page must not do to /api: a foreign or null Origin in local mode (sign-in mode has
    the bearer token, which a page of another site cannot send without a preflight), a body that is
    not JSON in both."""
    origin = None if sign_in else foreign_origin(request)
    if origin is not None:
        return guard.cross_origin(request, origin)
    return guard.not_json(request)


async def _json(request: Request) -> dict[str, Any]:
    raw = await guard.read_capped(request, MAX_BODY)
    if raw is None:
        raise TooLarge(
            f"request body over {MAX_BODY // 1024} KiB", "send less (one fact or config per request)"
        )
    try:
        data = json.loads(raw or b"{}")
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise InvalidInput("the request body is not JSON", "send a JSON object") from None
    if not isinstance(data, dict):
        raise InvalidInput("the request body is not a JSON object", "send a JSON object")
    return data


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
    out = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in asdict(row).items()}
    return out | {"handoff": named.get(row.handoff) if row.handoff else None}


def _note(note: Note) -> dict[str, Any]:
    return {
        key: (value.isoformat() if isinstance(value, datetime) else value)
        for key, value in {"id": note.id, **asdict(note)}.items()
    }


def _fact(fact: Fact) -> dict[str, Any]:
    return {
        key: (value.isoformat() if isinstance(value, datetime) else value)
        for key, value in {"id": fact.id, **asdict(fact)}.items()
    }
