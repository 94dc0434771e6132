"""How much one caller may ask of `lore serve`: token buckets kept in the process (each replica
counts for itself), and the ASGI guard in front of OAuth's dynamic client registration, which
anyone may call without signing in.

A refused request gets 429 with `Retry-After` (whole seconds), or 413 for a body over the cap, as
JSON `{"error", "error_description"}` (RFC 7591's error shape, which registration clients read).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

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
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    if retry_after:
        headers.append((b"retry-after", str(max(1, math.ceil(retry_after))).encode()))
    body = json.dumps({"error": error, "error_description": description}).encode()
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


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
        wait = self.each.take(client_address(scope)) or self.everyone.take("*")
        if wait:
            await refuse(send, 429, "invalid_client_metadata", "too many registrations: try later", wait)
            return
        await self.app(scope, _capped(receive, MAX_REGISTRATION_BODY), send)


def _capped(receive: Receive, limit: int) -> Receive:
    """A receive that ends the body (as a disconnect) once more than `limit` bytes arrived."""
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                return {"type": "http.disconnect"}
        return message

    return wrapped
