"""What the `/api` route modules share (lore.http.api hands each its `route` decorator, the body
reader and the session resolver): their types, and a write's prologue."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from lore.core.session import SessionContext

Handler = Callable[[Request], Awaitable[Response]]
Route = Callable[[str, list[str]], Callable[[Handler], Handler]]
Body = Callable[[Request], Awaitable[dict[str, Any]]]
Resolver = Callable[[Request, str, object], Awaitable[SessionContext]]


async def posted(request: Request, body: Body, resolve: Resolver) -> tuple[dict[str, Any], SessionContext]:
    """A write's JSON body, and the session of the workspace it names (else the query's or the
    header's, as `resolve` reads them)."""
    data = await body(request)
    return data, await resolve(request, "api", data.get("workspace"))
