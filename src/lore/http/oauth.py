"""The MCP authorization flow (OAuth 2.1 with PKCE, dynamic client registration, refresh, revoke):
`lore serve --oauth` is its own authorization server, through the SDK's `create_auth_routes`.

lore has no passwords. Signing in at `/oauth/sign-in` means pasting a personal token from
`lore token create USER`; the client then holds short-lived access tokens (1 hour) and a rotating
refresh token (30 days), never the personal token, and every one of them dies with the personal
token it came from (`lore token revoke ID`). Requests and codes live in the database, hashed, so any
replica can answer any step.
"""

from __future__ import annotations

import html
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from mcp.server.auth.provider import (
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RefreshToken,
    RegistrationError,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from lore.core.users import looks_like_token
from lore.http.signin import SCOPE, LoreAccessToken, access_token, checked_once
from lore.service import accounts
from lore.service.runtime import Runtime

ACCESS_TTL = timedelta(hours=1)
REFRESH_TTL = timedelta(days=30)
TTL = accounts.Lifetimes(ACCESS_TTL, REFRESH_TTL)
REQUEST_TTL = timedelta(minutes=10)
CODE_TTL = timedelta(minutes=5)
SIGN_IN_PATH = "/oauth/sign-in"


class LoreCode(AuthorizationCode):
    grant_id: int  # the personal token the user signed in with


class LoreRefreshToken(RefreshToken):
    id: int
    parent_id: int | None = None


class OAuthProvider:
    """`OAuthAuthorizationServerProvider` over lore's tables."""

    def __init__(self, state: Runtime, base_url: str) -> None:
        self.state = state
        self.base_url = base_url.rstrip("/")
        self.resource = f"{self.base_url}/mcp"

    # --- clients ---------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        info = await self.state.call(accounts.oauth_client, client_id)
        return OAuthClientInformationFull.model_validate(info) if info else None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Refused unless every redirect goes to https or to this machine's loopback (where a native
        client listens), and the name is short: the consent page shows both."""
        check_registration(client_info)
        info = client_info.model_dump(mode="json", exclude_none=True)
        await self.state.call(accounts.register_oauth_client, str(client_info.client_id), info)

    # --- authorization: the user signs in with a personal token ---------------------------------

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        data = params.model_dump(mode="json")
        request_id = await self.state.call(
            accounts.add_oauth_request, str(client.client_id), data, REQUEST_TTL
        )
        return f"{self.base_url}{SIGN_IN_PATH}?request={request_id}"

    def routes(self) -> list[Route]:
        """The sign-in page the authorization step sends the user to (lore's app serves it)."""
        return [Route(SIGN_IN_PATH, self.sign_in, methods=["GET", "POST"])]

    async def sign_in(self, request: Request) -> Response:
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            pending = await self._pending(request_id)
            if pending is None:
                return _page("This sign-in link has expired. Start again from your agent.", status=400)
            return _form(request_id, pending[0], _redirect_host(pending[1]))
        form = await request.form()
        request_id, secret = str(form.get("request", "")), str(form.get("token", "")).strip()
        pending = await self._pending(request_id)
        if pending is None:
            return _page("This sign-in link has expired. Start again from your agent.", status=400)
        principal = await self.state.call(accounts.verify, secret, ("personal",))
        if principal is None:
            host = _redirect_host(pending[1])
            return _form(request_id, pending[0], host, error="That token is not valid.", status=401)
        issued = await self.state.call(accounts.issue_code, request_id, principal, CODE_TTL)
        if issued is None:
            return _page("This sign-in link has expired. Start again from your agent.", status=400)
        code, data = issued
        params = AuthorizationParams.model_validate(data)
        redirect = construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)
        return RedirectResponse(redirect, status_code=302, headers={"Cache-Control": "no-store"})

    async def _pending(self, request_id: str) -> tuple[str, dict[str, Any]] | None:
        """(client name, authorization params) of a live request."""
        return await self.state.call(accounts.pending_oauth_request, request_id)

    # --- codes and tokens ----------------------------------------------------------------------

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> LoreCode | None:
        row = await self.state.call(accounts.load_code, authorization_code, str(client.client_id))
        if row is None:
            return None
        params = AuthorizationParams.model_validate(row[2])
        return LoreCode(
            code=authorization_code,
            scopes=params.scopes or [SCOPE],
            expires_at=float(row[3]),
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject=row[0],
            grant_id=int(row[1]),
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: LoreCode
    ) -> OAuthToken:
        try:
            issued = await self.state.call(
                accounts.exchange_code,
                authorization_code.code,
                str(client.client_id),
                authorization_code.grant_id,
                TTL,
            )
        except accounts.GrantEnded as exc:
            raise TokenError("invalid_grant", exc.message) from None
        return _oauth_token(issued)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> LoreRefreshToken | None:
        principal = await self.state.call(accounts.verify, refresh_token, ("refresh",))
        if principal is None or principal.client_id != client.client_id:
            return None
        return LoreRefreshToken(
            token=f"lore-token-{principal.token_id}",
            client_id=str(principal.client_id),
            scopes=[SCOPE],
            expires_at=int(principal.expires_at.timestamp()) if principal.expires_at else None,
            subject=principal.user,
            id=principal.token_id,
            parent_id=principal.parent_id,
        )

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: LoreRefreshToken, scopes: list[str]
    ) -> OAuthToken:
        """Rotation: the old refresh token (and its access tokens) is revoked, a new pair issued."""
        if refresh_token.parent_id is None or refresh_token.subject is None:
            raise TokenError("invalid_grant", "refresh token has no grant")
        grant, user = refresh_token.parent_id, refresh_token.subject

        try:
            issued = await self.state.call(
                accounts.rotate_refresh,
                refresh_token.id,
                user,
                str(client.client_id),
                grant,
                TTL,
            )
        except accounts.GrantEnded as exc:
            raise TokenError("invalid_grant", exc.message) from None
        return _oauth_token(issued)

    async def load_access_token(self, token: str) -> LoreAccessToken | None:
        return await checked_once(token, self._load_access_token)

    async def _load_access_token(self, token: str) -> LoreAccessToken | None:
        if not looks_like_token(token):
            return None
        principal = await self.state.call(accounts.verify, token)
        return access_token(principal, self.resource) if principal is not None else None

    async def revoke_token(self, token: LoreAccessToken | LoreRefreshToken) -> None:
        # An access token takes its refresh token with it (the parent); a refresh token, its children.
        target = token.parent_id if isinstance(token, LoreAccessToken) and token.parent_id else token.id
        await self.state.call(accounts.revoke_token, target)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "lore signs in with its own tokens only")


def _oauth_token(issued: accounts.Issued) -> OAuthToken:
    return OAuthToken(
        access_token=issued.access_token,
        token_type="Bearer",
        expires_in=issued.expires_in,
        scope=SCOPE,
        refresh_token=issued.refresh_token,
    )


# --- registration ----------------------------------------------------------------------------------

MAX_CLIENT_NAME = 100
MAX_REDIRECT_URIS = 10
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def check_registration(info: OAuthClientInformationFull) -> None:
    """RFC 8252 for native clients, RFC 9700 for the rest: a redirect URI is `https:` with a host, or
    `http:` to this machine's loopback; never `javascript:`, `data:`, `file:` or a custom scheme
    that any app could claim. A name the consent page can show in one line."""
    name = info.client_name or ""
    if len(name) > MAX_CLIENT_NAME or any(ord(ch) < 32 for ch in name):
        raise RegistrationError(
            "invalid_client_metadata",
            f"client_name must be at most {MAX_CLIENT_NAME} printable characters",
        )
    uris = [str(u) for u in info.redirect_uris or []]
    if not uris or len(uris) > MAX_REDIRECT_URIS:
        raise RegistrationError("invalid_redirect_uri", f"give 1 to {MAX_REDIRECT_URIS} redirect_uris")
    for uri in uris:
        parts = urlsplit(uri)
        try:
            host, _ = (parts.hostname or "").lower(), parts.port  # a port that is not a number: refused
        except ValueError:
            host = ""
        # `http://localhost:80@evil.example/cb` is evil.example (a userinfo of "localhost:80"): a
        # redirect URI carries no userinfo at all, and only its host names where the code goes.
        secure = parts.scheme == "https" and bool(host)
        local = parts.scheme == "http" and host in LOOPBACK
        if not (secure or local) or parts.fragment or "@" in parts.netloc:
            raise RegistrationError(
                "invalid_redirect_uri",
                f"{uri[:100]!r}: a redirect URI must be https, or http to 127.0.0.1 / localhost / [::1]",
            )


# --- the sign-in page ----------------------------------------------------------------------------


def _page(body: str, *, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><html><head><meta charset='utf-8'><title>Sign in to lore</title>"
        "<meta name='viewport' content='width=device-width'></head>"
        "<body style='font-family:system-ui;max-width:34rem;margin:3rem auto'>"
        f"<h1>Sign in to lore</h1>{body}</body></html>",
        status_code=status,
        headers={"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"},
    )


def _redirect_host(params: dict[str, Any]) -> str:
    """Where signing in sends the browser (and the code): the redirect URI's host (and port), never
    a userinfo that could pose as one."""
    parts = urlsplit(str(params.get("redirect_uri", "")))
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    host = parts.hostname or ""
    return (f"[{host}]" if ":" in host else host) + port if host else "(unknown)"


def _form(request_id: str, client: str, host: str, *, error: str = "", status: int = 200) -> HTMLResponse:
    problem = f"<p style='color:#b00'>{html.escape(error)}</p>" if error else ""
    return _page(
        f"<p>An application that calls itself <b>{html.escape(client)}</b> asks to use your lore memory."
        "</p><p style='font-size:1.25rem;border:2px solid #b60;padding:.6rem'>Signing in sends your access "
        f"to <b>{html.escape(host)}</b>.<br><small>Continue only if that is the program you are signing "
        "in to (a local agent shows 127.0.0.1 or localhost).</small></p>"
        f"{problem}"
        "<form method='post'>"
        f"<input type='hidden' name='request' value='{html.escape(request_id, quote=True)}'>"
        "<p><label>Your lore token (from <code>lore token create YOU</code>)<br>"
        "<input type='password' name='token' autocomplete='off' size='50' autofocus></label></p>"
        "<p><button type='submit'>Sign in</button></p></form>",
        status=status,
    )
