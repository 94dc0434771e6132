"""The one Starlette app of `lore serve`, lore's own: `/healthz` (the process answers), `/readyz`
(and the database does: what a load balancer should check), `/metrics`, the JSON API
(`lore.http.api`), OAuth's sign-in page and the web UI (`lore.http.web`, at `/`), with the SDK's
streamable HTTP MCP app mounted last (`/mcp`, and with --oauth the SDK's OAuth endpoints), as the
SDK expects to be mounted: its session manager runs in this app's lifespan. In sign-in mode the
bearer token is checked for every request by the SDK's own middleware over lore's verifier. The
MCP server itself is made by the composition root (lore.cli.serving) and handed in: this package
never imports lore.mcp."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware, get_access_token
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
from mcp.server.auth.provider import OAuthAuthorizationServerProvider, ProviderTokenVerifier, TokenVerifier
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import DEFAULT_SESSION_IDLE_TIMEOUT
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from lore.core import local_secret
from lore.core.errors import LoreError
from lore.core.users import looks_like_token
from lore.http import api, guard
from lore.http.api_routes import Lore, lore, runtime
from lore.http.limits import Buckets, RecordPeer, RegistrationGuard, UserLimits, UserRate
from lore.http.oauth import OAuthProvider
from lore.http.observe import Observe
from lore.http.signin import SCOPE, DatabaseTokenVerifier
from lore.http.stateless import StatelessSessions
from lore.service import accounts, health, metrics
from lore.service.runtime import Runtime

IDLE = DEFAULT_SESSION_IDLE_TIMEOUT  # seconds an MCP session with no request in flight is kept


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
    """lore's app: its own routes (probes, /metrics, /api, OAuth's sign-in page, the web UI), then,
    mounted at `/` after them, the SDK's MCP app around `server` (made by the composition root,
    lore.cli.serving, with `auth`): `/mcp`, and with --oauth the OAuth endpoints. lore's state is
    read from `app.state.lore` (lore.http.api_routes.Lore); the lifespan runs the SDK's session
    manager (which enters the MCP server's own lifespan)."""
    mcp_app = server.streamable_http_app(
        host=options.host,
        stateless_http=options.stateless,
        json_response=options.stateless,  # no server push without a session: plain JSON answers
        max_sessions=int(runtime.env.get("LORE_MAX_SESSIONS", "10000")),
        session_idle_timeout=IDLE,
    )
    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        *api.routes(),
    ]
    if isinstance(auth.auth_server_provider, OAuthProvider):
        routes += auth.auth_server_provider.routes()

    def named() -> list[BaseRoute]:  # what /metrics names a request by: lore's routes, then the SDK's
        return [*(r for r in app.routes if not isinstance(r, Mount)), *mcp_app.routes]

    app = Starlette(routes=routes, middleware=_middleware(options, auth, named), lifespan=_lifespan(server))
    app.state.lore = Lore(runtime, options.sign_in, auth.local_secret)
    env = runtime.env
    buckets = Buckets(float(env.get("LORE_USER_RATE", "50")), float(env.get("LORE_USER_BURST", "200")))
    if options.sign_in:  # the JSON API: the same per-user rate as /mcp's, counted together
        for route in app.routes:
            if isinstance(route, Route) and route.path.startswith("/api/"):
                route.app = UserRate(route.app, buckets)
    # The web UI at `/` (lore.web); in local mode it returns the one-time sign-in link to print.
    from lore.http.web.routes import mount

    app.state.sign_in_link = mount(
        app, runtime, sign_in=options.sign_in, base_url=options.base_url, local_secret=auth.local_secret
    )
    app.router.routes.append(SdkMount(mcp_app, _in_front_of_mcp(mcp_app, runtime, options, auth, buckets)))
    metrics.enable()
    return app


def _middleware(options: Options, auth: Auth, routes: Callable[[], list[BaseRoute]]) -> list[Middleware]:
    """Outermost first: the TCP peer, then X-Forwarded-For (uvicorn's is off); the request counted,
    timed and logged (lore.http.observe); OAuth's registration bounded; the bearer token checked
    for every request (sign-in mode: the SDK's own middleware, over lore's verifier)."""
    outer = [Middleware(RecordPeer), Middleware(Observe, routes=routes, json_log=options.json_logs)]
    if options.oauth:  # anyone may register a client: bounded in size and rate (lore.http.limits)
        outer.append(Middleware(RegistrationGuard))
    verifier = auth.token_verifier
    if auth.auth_server_provider is not None:
        verifier = ProviderTokenVerifier(auth.auth_server_provider)
    if verifier is not None:
        outer.append(Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)))
        outer.append(Middleware(AuthContextMiddleware))
    return outer


def _lifespan(server: MCPServer[Any]) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The SDK's session manager runs while the app does (as the SDK's own app would run it)."""

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return lifespan


def _in_front_of_mcp(
    mcp_app: ASGIApp, runtime: Runtime, options: Options, auth: Auth, buckets: Buckets
) -> ASGIApp:
    """The SDK's app, with lore's checks in front of `/mcp`: stateless sessions any replica serves
    (their state in the request or the database), then per-user limits (sign-in mode: one user
    cannot take the server's sessions or requests from the others) or local mode's secret (any
    local user can reach loopback)."""
    front: ASGIApp = mcp_app
    if options.stateless:
        front = StatelessSessions(front, runtime, sign_in=options.sign_in)
    if options.sign_in:
        env = runtime.env
        sessions = None if options.stateless else int(env.get("LORE_USER_MAX_SESSIONS", "64"))
        front = UserLimits(front, sessions=sessions, buckets=buckets, idle=IDLE)
    else:
        assert auth.local_secret is not None
        front = guard.RequireLocalSecret(front, auth.local_secret)
    return OnPath("/mcp", front, mcp_app)


class SdkMount(Mount):
    """The SDK's app mounted at `/`, last, claiming only the paths the SDK serves: any other path
    stays lore's router's (a trailing slash redirected, else 404), as when every route was in one
    app. `front` is the SDK's app with lore's checks in front of `/mcp`."""

    def __init__(self, sdk: Starlette, front: ASGIApp) -> None:
        super().__init__("", app=front)
        self.served = sdk.routes

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if all(route.matches(scope)[0] == Match.NONE for route in self.served):
            return Match.NONE, {}
        return super().matches(scope)


class OnPath:
    """`app` for requests to `path`, `other` for the rest."""

    def __init__(self, path: str, app: ASGIApp, other: ASGIApp) -> None:
        self.path, self.app, self.other = path, app, other

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self.app if scope.get("path") == self.path else self.other
        await chosen(scope, receive, send)


async def healthz(_: Request) -> Response:
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> Response:
    try:
        schema = await runtime(request).call(health.schema)
    except LoreError as exc:
        return JSONResponse({"ok": False, "error": exc.message}, status_code=503)
    # A newer schema is fine: a newer replica migrated it, and migrations only add and relax.
    body: dict[str, object] = {"ok": schema.current, "schema": schema.version}
    body.update(expected=schema.expected, listen=schema.listen)
    if schema.warning:  # ready all the same: replies then come with the poll (docs/deploy.md)
        body["warning"] = schema.warning
    return JSONResponse(body, status_code=200 if schema.current else 503)


async def metrics_page(request: Request) -> Response:
    """Prometheus' text format, behind the same rule as /mcp and /api: a lore token in sign-in
    mode (any user's: no metric names a user or a space), the local secret in local mode."""
    if not await _may_scrape(request):
        return JSONResponse(
            {"error": "invalid_token", "error_description": "/metrics needs a bearer token"},
            status_code=401,
            headers={"WWW-Authenticate": "Bearer"},
        )
    body, content_type = await anyio.to_thread.run_sync(metrics.render, runtime(request).transact)
    return Response(body, media_type=content_type)


async def _may_scrape(request: Request) -> bool:
    given, secret = request.headers.get("authorization"), lore(request).local_secret
    if secret is not None:  # local mode
        return local_secret.matches(given, secret)
    scheme, _, token = (given or "").partition(" ")
    if scheme.lower() != "bearer" or not looks_like_token(token.strip()):
        return False
    return await runtime(request).call(accounts.verify, token.strip()) is not None
