"""How much one caller may ask of `lore serve`: token buckets kept in the process (each replica
counts for itself), and the ASGI guard in front of OAuth's dynamic client registration, which
anyone may call without signing in.

A refused request gets 429 with `Retry-After` (whole seconds), or 413 for a body over the cap, as
JSON `{"error", "error_description"}` (RFC 7591's error shape, which registration clients read).
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from lore.service import metrics

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

REGISTER_PATH = "/register"
MAX_REGISTRATION_BODY = 16 * 1024
MAX_KEYS = 10_000  # callers remembered at once; the oldest go first beyond that


@dataclass
class Buckets:
    """`rate` requests per second on average, bursts of `burst`, per key (a client address, a user)."""

    rate: float
    burst: float
    _state: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> (tokens, at)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, key: str, now: float | None = None) -> float:
        """0 when the request may go ahead (and is counted); else the seconds until it could."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, at = self._state.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - at) * self.rate)
            if tokens >= 1:
                self._state[key] = (tokens - 1, now)
                wait = 0.0
            else:
                self._state[key] = (tokens, now)
                wait = (1 - tokens) / self.rate
            while len(self._state) > MAX_KEYS:
                self._state.pop(next(iter(self._state)))
            return wait


async def refuse(send: Send, status: int, error: str, description: str, retry_after: float = 0) -> None:
    metrics.refused(f"{error}:{status}")
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    if retry_after:
        headers.append((b"retry-after", str(max(1, math.ceil(retry_after))).encode()))
    body = json.dumps({"error": error, "error_description": description}).encode()
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


PEER = "lore.peer"  # the scope key of the TCP peer, before X-Forwarded-For was applied (RecordPeer)


def peer_address(scope: Scope) -> str:
    """The address of the TCP peer itself: what a limit per address keys on. `client` is taken from
    X-Forwarded-For when the peer is a trusted proxy (loopback by default), and any local process can
    send that header to a loopback server: one forged value per request was one fresh bucket."""
    peer = scope.get(PEER)
    return str(peer[0]) if peer else client_address(scope)


class RecordPeer:
    """Outermost: keeps the TCP peer in the scope, then applies X-Forwarded-For and -Proto from the
    trusted proxies (FORWARDED_ALLOW_IPS, default 127.0.0.1: uvicorn's own rule, which `lore serve`
    turns off in uvicorn so that the peer is still known here)."""

    def __init__(self, app: ASGIApp) -> None:
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        trusted = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
        self.app = ProxyHeadersMiddleware(app, trusted_hosts=trusted)  # type: ignore[arg-type]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope[PEER] = scope.get("client")
        await self.app(scope, receive, send)  # type: ignore[arg-type]


class RegistrationGuard:
    """In front of `POST /register`: a body over 16 KiB is refused before it is read (by its
    Content-Length, or as soon as a streamed body passes the cap), and each client address may
    register `per_minute` clients a minute (bursts of as many), all addresses together ten times
    that: a flood from many addresses cannot fill the table either."""

    def __init__(self, app: ASGIApp, per_minute: float = 10) -> None:
        self.app = app
        self.each = Buckets(per_minute / 60, per_minute)
        self.everyone = Buckets(per_minute * 10 / 60, per_minute * 10)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or scope.get("path") != REGISTER_PATH:
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_REGISTRATION_BODY):
            await refuse(send, 413, "invalid_client_metadata", "registration body over 16 KiB")
            return
        wait = self.each.take(peer_address(scope)) or self.everyone.take("*")
        if wait:
            await refuse(send, 429, "invalid_client_metadata", "too many registrations: try later", wait)
            return
        body = await _read_capped(receive, MAX_REGISTRATION_BODY)
        if body is None:  # a streamed (chunked) body past the cap: refused, never half-read by the SDK
            await refuse(send, 413, "invalid_client_metadata", "registration body over 16 KiB")
            return
        await self.app(scope, _replay(body), send)


async def _read_capped(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None once more than `limit` bytes arrived (or the client left)."""
    parts: list[bytes] = []
    seen = 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            return None
        chunk = message.get("body", b"")
        seen += len(chunk)
        if seen > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body", False):
            return b"".join(parts)


def _replay(body: bytes) -> Receive:
    """A receive that hands `body` over once, then waits as a connection would."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


class UserLimits:
    """In front of `/mcp` in sign-in mode, after the bearer token was checked (scope["user"]): each
    user may open `sessions` MCP sessions (None: no cap, a stateless server keeps none) and send
    requests at the rate of `buckets` (shared with the JSON API, UserRate); past that, 429 with
    Retry-After for that user alone. Everyone else's requests are not counted against them.

    Open sessions are the ids this server handed out (the `mcp-session-id` of each initialize
    answer), kept here as the SDK's session manager keeps them: until the client ends one (DELETE),
    the SDK no longer knows it (404), or it was idle `idle` seconds with no request in flight (the
    SDK's session_idle_timeout, which lore.http.app gives both)."""

    def __init__(self, app: ASGIApp, *, sessions: int | None, buckets: Buckets, idle: float) -> None:
        self.app = app
        self.sessions = sessions
        self.buckets = buckets  # shared with the JSON API (UserRate): one rate per user
        self.idle = idle
        self._open: dict[str, dict[str, float]] = {}  # user -> {session id: last seen}
        self._busy: dict[str, int] = {}  # session id -> requests in flight

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = user_of(scope)
        if scope["type"] != "http" or user is None:
            await self.app(scope, receive, send)  # not signed in: the SDK answers 401
            return
        wait = self.buckets.take(user)
        if wait:
            await refuse(send, 429, "rate_limited", "too many requests from this user: slow down", wait)
            return
        if self.sessions is None:
            await self.app(scope, receive, send)
            return
        mine = self._open.setdefault(user, {})
        given = dict(scope.get("headers") or []).get(b"mcp-session-id")
        if given is not None:
            await self._in_session(mine, given.decode("latin-1"), scope, receive, send)
        elif scope.get("method") == "POST":
            await self._opening(mine, scope, receive, send)
        else:
            await self.app(scope, receive, send)

    async def _opening(self, mine: dict[str, float], scope: Scope, receive: Receive, send: Send) -> None:
        """A request without a session: an initialize, refused past the cap; the id of the session it
        opens is noted."""
        self._forget_ended(mine)
        if self.sessions is not None and len(mine) >= self.sessions:
            await refuse(
                send,
                429,
                "too_many_sessions",
                f"this user has {len(mine)} MCP sessions open (the limit is {self.sessions}): close one",
                retry_after=30,
            )
            return

        async def noting(message: Message) -> None:
            if message.get("type") == "http.response.start":
                for name, value in message.get("headers") or []:
                    if name.lower() == b"mcp-session-id":
                        mine[value.decode("latin-1")] = time.monotonic()
            await send(message)

        await self.app(scope, receive, noting)

    async def _in_session(
        self, mine: dict[str, float], session: str, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A request of a session: it keeps the session open while in flight; a DELETE answered 2xx
        or any 404 (the SDK does not know it) ends it."""
        ended = False

        async def watching(message: Message) -> None:
            nonlocal ended
            if message.get("type") == "http.response.start":
                code = int(message.get("status", 500))
                ended = code == 404 or (scope.get("method") == "DELETE" and 200 <= code < 300)
            await send(message)

        self._busy[session] = self._busy.get(session, 0) + 1
        try:
            await self.app(scope, receive, watching)
        finally:
            left = self._busy.pop(session) - 1
            if left:
                self._busy[session] = left
            if ended:
                mine.pop(session, None)
            elif session in mine:  # not one that ended (a DELETE) while this request was in flight
                mine[session] = time.monotonic()

    def _forget_ended(self, mine: dict[str, float]) -> None:
        now = time.monotonic()
        for session, seen in list(mine.items()):
            if not self._busy.get(session) and now - seen >= self.idle:
                del mine[session]


class UserRate:
    """In front of a route of the JSON API in sign-in mode: the same per-user rate as `/mcp` (one
    Buckets for both), so one user's scripts cannot slow everyone else's calls down."""

    def __init__(self, app: ASGIApp, buckets: Buckets) -> None:
        self.app, self.buckets = app, buckets

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = user_of(scope)
        if scope["type"] == "http" and user is not None:
            wait = self.buckets.take(user)
            if wait:
                await refuse(send, 429, "rate_limited", "too many requests from this user: slow down", wait)
                return
        await self.app(scope, receive, send)


def user_of(scope: Scope) -> str | None:
    """The signed-in user of a request the SDK's bearer middleware authenticated, else None."""
    token = getattr(scope.get("user"), "access_token", None)
    subject = getattr(token, "subject", None)
    return str(subject) if subject else None
