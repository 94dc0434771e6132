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
    GET  /api/which?workspace=           the space a workspace resolves to, and why (`lore which`)
    PUT  /api/config                     {"toml", "home"}: replace the user's config (sign-in mode)
    GET  /api/session-start?workspace=&client=    the session-start text, rendered by the server
    POST /api/hooks/...                  the hosted hooks' events (lore.http.hook_routes)
    /api/facts, /api/facts/{id}[/revise|/forget], /api/log[/{id}]   lore.http.api_facts
    /api/notes, /api/search, /api/handoff, /api/tidy   lore.http.api_memory
    /api/tasks, /api/messages            lore.http.api_work
    GET  /api/export                     lore.http.api_data

The command line on a client (lore.cli.gateway) calls these with `X-Lore-Client: cli`: what it writes
says `cli`, as a local command's does. A write's `allow_secret` is `--allow-secret`: a person's choice.

The checks themselves (and the status of each LoreError) live in lore.request_guard, shared with the web UI.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lore.core import local_secret, users
from lore.core.errors import InvalidInput, LoreError, Refused
from lore.http import api_data, api_facts, api_memory, api_work, guard, hook_routes
from lore.http.api_routes import Handler, Routes, body, lore, runtime, session
from lore.http.guard import foreign_origin
from lore.service import accounts, wire
from lore.service.session_start import client_of, session_start


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


def routes() -> list[Route]:
    """The routes under /api, each behind `guarded`. They read lore's state from the app
    (lore.http.api_routes.Lore at `app.state.lore`)."""
    modules = (hook_routes, api_facts, api_memory, api_work, api_data)
    table = [*ROUTES, *(row for module in modules for row in module.ROUTES)]
    return [Route(path, guarded(handler), methods=methods) for path, handler, methods in table]


def guarded(handler: Handler) -> Handler:
    """`handler` behind /api's checks: a signed-in user (sign-in mode), or loopback and the local
    secret (local mode); no request a web page of another site could make; a LoreError answered
    with its status and hint."""

    async def checked(request: Request) -> Response:
        refused = _refusal(request)
        if refused is not None:
            return refused
        try:
            return await handler(request)
        except LoreError as exc:
            return guard.error(exc)

    checked.__name__ = checked.__qualname__ = handler.__name__
    return checked


def _refusal(request: Request) -> Response | None:
    here = lore(request)
    if here.sign_in and not isinstance(request.scope.get("user"), AuthenticatedUser):
        return unauthorized()
    if not here.sign_in and not guard.on_loopback(request):
        return guard.off_loopback()
    given = request.headers.get("authorization")
    if not here.sign_in and not local_secret.matches(given, here.local_secret or ""):
        return guard.no_local_secret(request)
    return _browser_refusal(request, here.sign_in)


async def me(request: Request) -> Response:
    """Who is signed in; and when the token of this request runs out (`lore doctor` on a client)."""
    sign_in = lore(request).sign_in
    body: dict[str, Any] = {"user": runtime(request).user(), "mode": "sign-in" if sign_in else "local"}
    held = get_access_token() if sign_in else None
    if held is not None:
        ends = held.expires_at
        body["expires_at"] = datetime.fromtimestamp(ends, UTC).isoformat() if ends else None
    return JSONResponse(body)


async def spaces(request: Request) -> Response:
    state = runtime(request)
    config, _env, _prefix = await state.scope()
    user = state.user()
    pushed = await state.accounts.fresh(user) if state.accounts is not None and user else None
    return JSONResponse(
        {
            "user": user,
            "default_space": config.default_space,
            "spaces": [
                {**asdict(s), "name": users.local_name(user, s.id) if user else s.id} for s in config.spaces
            ],
            # sign-in mode: which push this is (0: never pushed, the starter) and its HOME
            "version": pushed.version if pushed is not None else None,
            "home": pushed.home if pushed is not None else None,
        }
    )


async def which(request: Request) -> Response:
    return JSONResponse({**wire.session(await session(request, "api")), "user": runtime(request).user()})


async def push_config(request: Request) -> Response:
    state = runtime(request)
    user = state.user()
    if user is None or state.accounts is None:
        raise Refused(
            "This server runs without sign-in and reads its own config file.",
            "Edit that file (`lore which` shows it); `lore config push` is for `lore serve --sign-in`.",
        )
    data = await body(request)
    text, home = data.get("toml"), data.get("home")
    if not isinstance(text, str) or not isinstance(home, str):
        raise InvalidInput(
            'send {"toml": "<config file text>", "home": "<your HOME>"}', "use `lore config push`"
        )
    pushed = await state.call(accounts.push_config, user, text, home)
    linked = await state.call(accounts.link_report, user)
    return JSONResponse(
        {
            "user": user,
            "version": pushed.version,
            "spaces": [users.local_name(user, s) for s in pushed.config.ids],
            "ignored": list(pushed.ignored),
            "links": linked,
        }
    )


async def session_start_text(request: Request) -> Response:
    client = client_of(request.query_params.get("client", "claude-code"))
    here = await session(request, client)
    started = await runtime(request).call(
        session_start, here, client, via="api", session_id=request.query_params.get("session_id")
    )
    return JSONResponse(
        {
            "text": started.text,
            "space": here.space,
            "shown": started.rendered.shown,
            "omitted": started.rendered.omitted,
            "total": started.total,
            "record": started.record,
        }
    )


ROUTES: Routes = [
    ("/api/me", me, ["GET"]),
    ("/api/spaces", spaces, ["GET"]),
    ("/api/which", which, ["GET"]),
    ("/api/config", push_config, ["PUT"]),
    ("/api/session-start", session_start_text, ["GET"]),
]


def _browser_refusal(request: Request, sign_in: bool) -> Response | None:
    """What a web page must not do to /api: a foreign or null Origin in local mode (sign-in mode has
    the bearer token, which a page of another site cannot send without a preflight), a body that is
    not JSON in both."""
    origin = None if sign_in else foreign_origin(request)
    if origin is not None:
        return guard.cross_origin(request, origin)
    return guard.not_json(request)
