"""What the `/api` route modules share: the state they read from the app (`request.app.state.lore`,
set by lore.http.app as the MCP SDK's lifespan context is set for its tools), the body reader, the
session of the caller's workspace, and the table each module exports (`ROUTES`: path, handler,
methods) that lore.http.api turns into the app's routes, every one behind the same sign-in check."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from lore.core.errors import InvalidInput, TooLarge
from lore.core.session import SessionContext
from lore.core.workspace import check_path
from lore.http import guard
from lore.service.runtime import REMOTE_HEADER, WORKSPACE_HEADER, Runtime

Handler = Callable[[Request], Awaitable[Response]]
Routes = list[tuple[str, Handler, list[str]]]  # (path, handler, methods)
MAX_BODY = 512 * 1024
CLIENT_HEADER = "x-lore-client"  # `cli`: the command line on a client (lore.cli.gateway)


@dataclass(frozen=True)
class Lore:
    """What `/api` reads from the app: the runtime, the mode, and local mode's secret (which every
    request must carry: lore.core.local_secret)."""

    runtime: Runtime
    sign_in: bool
    local_secret: str | None = None


def lore(request: Request) -> Lore:
    """The app's `Lore` (lore.http.app puts it at `app.state.lore`)."""
    found: Lore = request.app.state.lore
    return found


def runtime(request: Request) -> Runtime:
    return lore(request).runtime


async def body(request: Request) -> dict[str, Any]:
    """The request's JSON object (at most MAX_BODY bytes)."""
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


async def session(
    request: Request, source: str = "api", workspace: object = None, remotes: str | None = None
) -> SessionContext:
    """The session of the workspace `workspace` names, else the query's `workspace`, else the
    X-Lore-Workspace header (a `cli` client's source is `cli`)."""
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
    return await runtime(request).session_for(value.strip(), source, "api workspace", remotes)


async def posted(request: Request) -> tuple[dict[str, Any], SessionContext]:
    """A write's JSON body, and the session of the workspace it names (else the query's or the
    header's)."""
    data = await body(request)
    return data, await session(request, "api", data.get("workspace"))
