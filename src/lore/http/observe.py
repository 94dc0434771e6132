"""Around every request of `lore serve`: a request id, the request counted and timed for `/metrics`
(by route, never by the path a caller typed), and with `--log-format json` one JSON line per
request on the `lore.access` logger. A request the database failed under outside any tool (its
token being checked while PostgreSQL restarts) gets 503 with `Retry-After`, never a bare 500.

The request id is the caller's `X-Request-Id` when it is a short plain token (a load balancer's,
so one id follows a request through both logs), else a new one; the answer carries it back. A log
line holds the method, the route, the path without its query string (`/api` query strings hold
workspace paths), the status, the time taken, the client address, the user (a name, in sign-in
mode) and the request id: never a header's value, a token or a body.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence

from starlette.routing import BaseRoute, Match

from lore.core.errors import DatabaseError
from lore.http.limits import ASGIApp, Message, Receive, Scope, Send, client_address, user_of
from lore.service import metrics

log = logging.getLogger("lore.access")
REQUEST_ID = b"x-request-id"
_GIVEN_ID = re.compile(rb"[A-Za-z0-9._:-]{8,64}")


class Observe:
    def __init__(self, app: ASGIApp, routes: Callable[[], Sequence[BaseRoute]], *, json_log: bool) -> None:
        self.app = app
        self.routes = routes
        self.json_log = json_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        given = dict(scope.get("headers") or []).get(REQUEST_ID, b"")
        request_id = given.decode("ascii") if _GIVEN_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        status = 500  # what the caller gets when the app fails before it answers
        status_sent = False

        async def answering(message: Message) -> None:
            nonlocal status, status_sent
            if message.get("type") == "http.response.start":
                status, status_sent = int(message.get("status", 500)), True
                message["headers"] = [*(message.get("headers") or []), (REQUEST_ID, request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, answering)
        except DatabaseError as exc:
            # The database went away under a request outside any tool (a token being checked, a
            # config read): a 503 that says to call again, never a bare 500.
            if status_sent:
                raise
            log.warning(
                "database unavailable for %s %s: %s", scope.get("method"), scope.get("path"), exc.message
            )
            status = 503
            body = json.dumps({"error": exc.message, "hint": exc.hint}).encode()
            headers = [
                (b"content-type", b"application/json"),
                (b"retry-after", b"1"),
                (REQUEST_ID, request_id.encode()),
            ]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        finally:
            seconds = time.monotonic() - started
            route = self._route(scope)
            method = str(scope.get("method", ""))
            metrics.http_request(route, method, status, seconds)
            if self.json_log:
                log.info(
                    "request",
                    extra={
                        "fields": {
                            "request_id": request_id,
                            "method": method,
                            "route": route,
                            "path": str(scope.get("path", ""))[:200],
                            "status": status,
                            "ms": round(seconds * 1000, 1),
                            "client": client_address(scope),
                            "user": user_of(scope),
                        }
                    },
                )

    def _route(self, scope: Scope) -> str:
        """The route template the request matched (`/api/facts/{id}`), or `other`."""
        for route in self.routes():
            try:
                match, _ = route.matches(scope)
            except Exception:
                continue
            if match == Match.FULL:
                return str(getattr(route, "path", "other"))
        return "other"
