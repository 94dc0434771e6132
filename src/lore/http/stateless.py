"""In front of `/mcp` on a stateless `lore serve` (`--stateless`: behind a load balancer without
affinity, any replica answers any request).

- The answer to a handshake-era `initialize` gets an `Mcp-Session-Id` made by lore
  (lore.core.session_ids): it carries the client's name, and the client sends it back on every
  later request, whichever replica gets it. So rows keep their `source`, a session never reads its
  own messages, and a change of space is told once (its record is in the database): per-session
  state lives in the request or the database, never in one process. A 2026-07-28 request needs
  none of this: it names its client in its own envelope.
- `GET /mcp` answers 405: a stateless server pushes nothing, and the SDK's stateless transport
  would hold the stream open for nothing (the MCP spec allows 405 there).
- `DELETE /mcp` answers 405 too, as the SDK's own stateless transport does: such a server does not
  end sessions (the spec allows it), so no session it issued ever becomes one to answer 404. Ending
  one would have to be known to every replica: a record of ended sessions and a database read on
  every request of every session, for a server that otherwise keeps nothing a session could lose.
  A session's record of its space goes after 30 days unseen (lore.store.mcp_sessions).
- A session id lore cannot have issued (another shape, or not decodable) answers 404, as an
  unknown session does in the spec: the client starts a new one. An id of the right shape that no
  replica issued cannot be told apart without such a read; it carries only a client's name, which
  any client may give in `initialize`, and every request is still checked for its token.
"""

from __future__ import annotations

import json
from typing import Any

from lore.core import session_ids
from lore.http.limits import ASGIApp, Message, Receive, Scope, Send, user_of
from lore.service.runtime import Runtime

MAX_PEEK = 64 * 1024  # an initialize request is small; a bigger body is not one worth reading
SESSION_HEADER = b"mcp-session-id"


class StatelessSessions:
    def __init__(self, app: ASGIApp, state: Runtime, *, sign_in: bool) -> None:
        self.app, self.state, self.sign_in = app, state, sign_in

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = scope.get("method")
        if method in ("GET", "DELETE"):
            await _not_allowed(send)
            return
        headers = dict(scope.get("headers") or [])
        if SESSION_HEADER in headers:
            signed_in = not self.sign_in or user_of(scope) is not None  # else the SDK answers 401
            if signed_in and not session_ids.well_formed(headers[SESSION_HEADER].decode("latin-1")):
                await _not_found(send)
                return
        if method != "POST" or SESSION_HEADER in headers:
            await self.app(scope, receive, send)
            return
        seen: list[bytes] = []
        size = 0

        async def peek() -> Message:
            nonlocal size
            message = await receive()
            if message.get("type") == "http.request" and size <= MAX_PEEK:
                chunk = message.get("body", b"")
                size += len(chunk)
                seen.append(chunk)
            return message

        async def issuing(message: Message) -> None:
            if message.get("type") == "http.response.start" and message.get("status") == 200:
                client = _initializing(b"".join(seen)) if size <= MAX_PEEK else None
                if client is not None:
                    session_id = session_ids.issue(*client).encode("ascii")
                    message["headers"] = [*(message.get("headers") or []), (SESSION_HEADER, session_id)]
            await send(message)

        await self.app(scope, peek, issuing)


def _initializing(body: bytes) -> tuple[str | None, str | None] | None:
    """(client name, version) when `body` is a handshake-era `initialize` request, else None."""
    try:
        request: Any = json.loads(body)
    except ValueError:
        return None
    if not isinstance(request, dict) or request.get("method") != "initialize":
        return None
    params = request.get("params")
    info = params.get("clientInfo") if isinstance(params, dict) else None
    if not isinstance(info, dict):
        return None, None
    name, version = info.get("name"), info.get("version")
    return (name if isinstance(name, str) else None), (version if isinstance(version, str) else None)


async def _not_allowed(send: Send) -> None:
    await _error(send, 405, "Method Not Allowed: stateless", [(b"allow", b"POST")])


async def _not_found(send: Send) -> None:
    await _error(send, 404, "Session not found: initialize a new session")


async def _error(send: Send, status: int, said: str, more: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": said}}).encode()
    headers = [(b"content-type", b"application/json"), *(more or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
