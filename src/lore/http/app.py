"""The one Starlette app of `lore serve`: the SDK's streamable HTTP MCP app at `/mcp` (with its
bearer-token middleware in sign-in mode), the JSON API (`lore.http.api`), `/healthz` (the process
answers), `/readyz` (and the database does: what a load balancer should check) and the web UI
(`lore.http.web`, at `/`). The MCP server itself is made by the composition root (lore.cli.serving)
and handed in: this package never imports lore.mcp."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import OAuthAuthorizationServerProvider, TokenVerifier
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from lore.core import local_secret
from lore.core.errors import LoreError
from lore.core.users import looks_like_token
from lore.http import api, guard
from lore.http.limits import Buckets, RecordPeer, RegistrationGuard, UserLimits, UserRate
from lore.http.oauth import OAuthProvider
from lore.http.observe import Observe
from lore.http.signin import SCOPE, DatabaseTokenVerifier
from lore.http.stateless import StatelessSessions
from lore.service import accounts, health, metrics
from lore.service.runtime import Runtime


@dataclass(frozen=True)
class Options:
    host: str = "127.0.0.1"
    port: int = 8765
    sign_in: bool = False
    oauth: bool = False  # also be an OAuth 2.1 authorization server (MCP spec's auth flow)
    public_url: str | None = None  # how clients reach this server (behind a proxy: its https URL)
    stateless: bool = False  # no MCP session state in the process: any replica answers any request
    json_logs: bool = False  # one JSON line per request on `lore.access` (lore.http.observe)

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


@dataclass(frozen=True)
class Auth:
    """What the MCP server is built with in this mode (lore.mcp.server.create_server's keywords)."""

    token_verifier: TokenVerifier | None = None
    auth: AuthSettings | None = None
    auth_server_provider: OAuthAuthorizationServerProvider[Any, Any, Any] | None = None
    local_secret: str | None = None  # local mode: what /api and /mcp require (lore.core.local_secret)


def auth_for(runtime: Runtime, options: Options) -> Auth:
    """Sign-in for this mode: none (local), lore's tokens (`--sign-in`), or lore as its own OAuth
    2.1 authorization server (`--oauth`). In both sign-in modes the runtime learns who each request
    is from the SDK's bearer authentication (the token's subject)."""
    if not options.sign_in:
        return Auth(local_secret=local_secret.read_or_create(runtime.env))
    runtime.sign_in(_subject)
    if options.oauth:
        settings = AuthSettings(
            issuer_url=options.base_url,  # type: ignore[arg-type]
            resource_server_url=f"{options.base_url}/mcp",  # type: ignore[arg-type]
            validate_token_resource=False,  # the provider checks the resource a token was issued for
            required_scopes=[SCOPE],
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=[SCOPE], default_scopes=[SCOPE]
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
        return Auth(auth=settings, auth_server_provider=OAuthProvider(runtime, options.base_url))
    settings = AuthSettings(issuer_url=options.base_url, resource_server_url=None)  # type: ignore[arg-type]
    return Auth(token_verifier=DatabaseTokenVerifier(runtime), auth=settings)


def _subject() -> str | None:
    token = get_access_token()
    return token.subject if token is not None else None


def build(runtime: Runtime, options: Options, server: MCPServer[Any], auth: Auth) -> Starlette:
    """The app around `server` (made by the composition root, lore.cli.serving, with `auth`)."""
    state = runtime
    if isinstance(auth.auth_server_provider, OAuthProvider):
        auth.auth_server_provider.register_routes(server)

    @server.custom_route("/healthz", methods=["GET"])  # type: ignore[untyped-decorator]
    async def healthz(_: Request) -> Response:
        return JSONResponse({"ok": True})

    @server.custom_route("/readyz", methods=["GET"])  # type: ignore[untyped-decorator]
    async def readyz(_: Request) -> Response:
        try:
            schema = await state.call(health.schema)
        except LoreError as exc:
            return JSONResponse({"ok": False, "error": exc.message}, status_code=503)
        # A newer schema is fine: a newer replica migrated it, and migrations only add and relax.
        body: dict[str, object] = {"ok": schema.current, "schema": schema.version}
        body.update(expected=schema.expected, listen=schema.listen)
        if schema.warning:  # ready all the same: replies then come with the poll (docs/deploy.md)
            body["warning"] = schema.warning
        current = schema.current
        return JSONResponse(body, status_code=200 if current else 503)

    @server.custom_route("/metrics", methods=["GET"])  # type: ignore[untyped-decorator]
    async def metrics_page(request: Request) -> Response:
        """Prometheus' text format, behind the same rule as /mcp and /api: a lore token in sign-in
        mode (any user's: no metric names a user or a space), the local secret in local mode."""
        if not await _may_scrape(state, request, auth.local_secret):
            return JSONResponse(
                {"error": "invalid_token", "error_description": "/metrics needs a bearer token"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        body, content_type = await anyio.to_thread.run_sync(metrics.render, state.transact)
        return Response(body, media_type=content_type)

    api.register(server, state, sign_in=options.sign_in, secret=auth.local_secret)
    app = server.streamable_http_app(
        host=options.host,
        stateless_http=options.stateless,
        json_response=options.stateless,  # no server push without a session: plain JSON answers
        max_sessions=int(state.env.get("LORE_MAX_SESSIONS", "10000")),
    )
    if options.stateless:  # sessions any replica serves: their state in the request or the database
        _mcp_route(app).app = StatelessSessions(_mcp_route(app).app, state, sign_in=options.sign_in)
    if options.oauth:  # anyone may register a client: bounded in size and rate (lore.http.limits)
        app.add_middleware(RegistrationGuard)
    if options.sign_in:  # one user cannot take the server's sessions or requests from the others
        _limit_users(app, server, state.env)
    else:  # any local user can reach loopback: /mcp needs this user's local secret
        assert auth.local_secret is not None
        _mcp_route(app).app = guard.RequireLocalSecret(_mcp_route(app).app, auth.local_secret)
    # The web UI at `/` (lore.web); in local mode it returns the one-time sign-in link to print.
    from lore.http.web.routes import mount

    app.state.sign_in_link = mount(
        app, state, sign_in=options.sign_in, base_url=options.base_url, local_secret=auth.local_secret
    )
    metrics.enable()
    app.add_middleware(Observe, routes=lambda: app.routes, json_log=options.json_logs)
    app.add_middleware(RecordPeer)  # outermost: the TCP peer, then X-Forwarded-For (uvicorn's is off)
    return app


async def _may_scrape(state: Runtime, request: Request, secret: str | None) -> bool:
    given = request.headers.get("authorization")
    if secret is not None:  # local mode
        return local_secret.matches(given, secret)
    scheme, _, token = (given or "").partition(" ")
    if scheme.lower() != "bearer" or not looks_like_token(token.strip()):
        return False
    return await state.call(accounts.verify, token.strip()) is not None


def _limit_users(app: Starlette, server: MCPServer[Any], env: Mapping[str, str]) -> None:
    """Per-user limits in front of `/mcp` and `/api` (lore.http.limits), inside the SDK's bearer
    authentication so that the user is known."""
    buckets = Buckets(float(env.get("LORE_USER_RATE", "50")), float(env.get("LORE_USER_BURST", "200")))
    route = _mcp_route(app)
    route.app = UserLimits(
        route.app,
        lambda: set(server.session_manager._server_instances),  # the SDK's live sessions
        sessions=int(env.get("LORE_USER_MAX_SESSIONS", "64")),
        buckets=buckets,
    )
    for other in app.routes:  # the JSON API: the same rate, counted together with /mcp's
        if isinstance(other, Route) and other.path.startswith("/api/"):
            other.app = UserRate(other.app, buckets)


def _mcp_route(app: Starlette) -> Route:
    for route in app.routes:
        if isinstance(route, Route) and route.path == "/mcp":
            return route
    raise AssertionError("the MCP app has no /mcp route")
