"""What every HTTP adapter of `lore serve` checks before it calls the core, in one place: the JSON API
(`lore.http.api`) and the web UI (`lore.web.app`) both use it (docs/reliability.md, local HTTP).

- `status`: the HTTP status of each LoreError; `error` / `refusal`: the JSON API's `{"error", "hint"}`
  answer (the web UI renders the same status as a page).
- `on_loopback`: the Host is the loopback interface (local mode serves nothing else: no DNS rebinding).
- `foreign_origin`: the Origin of a page of another site, `null` included.
- `not_json`: a write whose body is not `application/json` (415), what any page can send anywhere
  without a CORS preflight.
- `declared_over` / `read_capped`: the body-size cap, before the body is read and while it is.
- `no_local_secret` / `RequireLocalSecret`: local mode's `Authorization: Bearer <local secret>`
  (lore.core.local_secret) on `/api` and `/mcp`: any local user can reach loopback.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from lore.core import local_secret
from lore.core.errors import (
    HTTP_STATUS,
    LoreError,
)

log = logging.getLogger("lore.http")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def status(exc: LoreError) -> int:
    """The HTTP status of a LoreError (400 for any kind the table does not name)."""
    return next((code for kind, code in HTTP_STATUS if isinstance(exc, kind)), 400)


def refusal(message: str, hint: str, status_code: int) -> Response:
    """The JSON API's one error shape: what happened, and what to do instead."""
    return JSONResponse({"error": message, "hint": hint}, status_code=status_code)


def error(exc: LoreError) -> Response:
    return refusal(exc.message, exc.hint, status(exc))


def host(request: Request) -> str:
    """The request's Host without its port (`[::1]` keeps its brackets)."""
    value = request.headers.get("host", "")
    return value.rsplit(":", 1)[0] if not value.endswith("]") else value


LOCAL_SECRET_HINT = (
    "send `Authorization: Bearer <local secret>`: `lore token local` prints it (the user who runs this "
    "lore serve can read it; other users of the machine cannot)"
)


def no_local_secret(request: Request) -> Response:
    """The answer to a local-mode request without this user's local secret (logged: another user of
    the machine, or a web page, trying this server)."""
    origin = request.headers.get("origin")
    where = f" from Origin {origin[:100]!r}" if origin is not None else ""
    log.warning("refused %s %s%s: no local secret", request.method, request.url.path, where)
    return JSONResponse(
        {"error": "this lore serve needs its local secret", "hint": LOCAL_SECRET_HINT},
        status_code=401,
        headers={"WWW-Authenticate": 'Bearer realm="lore-local"'},
    )


class RequireLocalSecret:
    """ASGI wrapper: only a request carrying the local secret reaches `app` (local mode's `/mcp`)."""

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app, self.secret = app, secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = Request(scope).headers.get("authorization")
            if not local_secret.matches(given, self.secret):
                await no_local_secret(Request(scope))(scope, receive, send)
                return
        await self.app(scope, receive, send)


def on_loopback(request: Request) -> bool:
    return host(request) in LOOPBACK_HOSTS


def off_loopback() -> Response:
    """The JSON API's answer to a Host that is not loopback, in local mode."""
    return refusal(
        "this server answers only on the loopback interface without sign-in",
        "call http://127.0.0.1:<port>/api/..., or run `lore serve --sign-in`",
        403,
    )


def foreign_origin(request: Request) -> str | None:
    """The Origin of a request sent by a page of another site (`null` included), or None: no Origin
    (lore's own clients, curl, scripts) or a page of this very server (same host and port)."""
    origin = request.headers.get("origin")
    if origin is None:
        return None
    parts = urlsplit(origin)
    if parts.scheme in ("http", "https") and parts.netloc == request.headers.get("host", ""):
        return None
    return origin


def cross_origin(request: Request, origin: str) -> Response:
    """The JSON API's answer to a page of another site (local mode: there is no token to ask for)."""
    log.warning("refused %s %s from Origin %.100r", request.method, request.url.path, origin)
    return refusal(
        f"refused: a web page ({origin[:100]}) may not use this server's API (local mode has no sign-in)",
        "call /api from a program (lore's own clients, curl and scripts send no Origin header); "
        "in a browser, use this server's web UI at /",
        403,
    )


def not_json(request: Request) -> Response | None:
    """415 for a write whose Content-Type is not `application/json` (a charset may follow)."""
    if request.method not in WRITES:
        return None
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "application/json":
        return None
    return refusal(
        f"the request body is {media[:100] or 'untyped'}, not JSON",
        "send a JSON object with Content-Type: application/json (curl: -H 'Content-Type: application/json')",
        415,
    )


def declared_over(request: Request, limit: int) -> bool:
    """The request says (Content-Length) that its body is over `limit` bytes."""
    length = request.headers.get("content-length")
    return length is not None and length.isdigit() and int(length) > limit


async def read_capped(request: Request, limit: int) -> bytes | None:
    """The body, or None when it is over `limit` bytes: said so up front, or found so while reading
    (no more than `limit` bytes and one chunk are ever held)."""
    if declared_over(request, limit):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)
