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
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import MCPServer
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.core import local_secret, users
from lore.core.errors import InvalidInput, LoreError, Refused, TooLarge
from lore.core.session import SessionContext
from lore.core.workspace import check_path
from lore.http import api_data, api_facts, api_memory, api_work, guard, hook_routes
from lore.http.guard import foreign_origin
from lore.service import accounts, wire
from lore.service.runtime import REMOTE_HEADER, WORKSPACE_HEADER, Runtime
from lore.service.session_start import client_of, session_start

Handler = Callable[[Request], Awaitable[Response]]
MAX_BODY = 512 * 1024
CLIENT_HEADER = "x-lore-client"  # `cli`: the command line on a client (lore.cli.gateway)


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
        """Who is signed in; and when the token of this request runs out (`lore doctor` on a client)."""
        body: dict[str, Any] = {"user": state.user(), "mode": "sign-in" if sign_in else "local"}
        held = get_access_token() if sign_in else None
        if held is not None:
            ends = held.expires_at
            body["expires_at"] = datetime.fromtimestamp(ends, UTC).isoformat() if ends else None
        return JSONResponse(body)

    @route("/api/spaces", ["GET"])
    async def spaces(_: Request) -> Response:
        config, _env, _prefix = await state.scope()
        user = state.user()
        pushed = await state.accounts.fresh(user) if state.accounts is not None and user else None
        return JSONResponse(
            {
                "user": user,
                "default_space": config.default_space,
                "spaces": [
                    {**asdict(s), "name": users.local_name(user, s.id) if user else s.id}
                    for s in config.spaces
                ],
                # sign-in mode: which push this is (0: never pushed, the starter) and its HOME
                "version": pushed.version if pushed is not None else None,
                "home": pushed.home if pushed is not None else None,
            }
        )

    @route("/api/which", ["GET"])
    async def which(request: Request) -> Response:
        return JSONResponse({**wire.session(await _session(request, "api")), "user": state.user()})

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

    hook_routes.register(route, state, _json, lambda *args: _session(*args))
    api_facts.register(route, state, _json, lambda *args: _session(*args))
    api_memory.register(route, state, _json, lambda *args: _session(*args), sign_in=sign_in)
    api_work.register(route, state, _json, lambda *args: _session(*args))
    api_data.register(route, state)

    async def _session(
        request: Request, source: str, workspace: object = None, remotes: str | None = None
    ) -> SessionContext:
        value = workspace or request.query_params.get("workspace") or request.headers.get(WORKSPACE_HEADER)
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(
                "no workspace: pass ?workspace=<project dir> or the X-Lore-Workspace header",
                "name the directory the agent works in (an absolute path)",
            )
        check_path(value, "api workspace")
        remotes = remotes or request.headers.get(REMOTE_HEADER)
        if source == "api" and request.headers.get(CLIENT_HEADER) == "cli":
            source = "cli"
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
