"""What every mock model API shares: a threaded HTTP server on 127.0.0.1 that records each request,
answers scripted replies, and lists every path it does not serve (so a test run reveals new calls).

Subclasses only translate a :class:`Reply` into their API's wire format (JSON or a server-sent event
stream) in :meth:`MockServer.handle`.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

JSON = dict[str, Any]


@dataclass(frozen=True)
class Reply:
    """One scripted model turn: text, or one call of a tool with arguments."""

    text: str = "ok"
    tool: str | None = None
    arguments: JSON = field(default_factory=dict)


def text(value: str = "ok") -> Reply:
    return Reply(text=value)


def call(tool: str, arguments: JSON | None = None) -> Reply:
    return Reply(text="", tool=tool, arguments=arguments or {})


Responder = Callable[[JSON], Reply | None]


@dataclass
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any  # parsed JSON, or None
    raw: bytes = field(repr=False, default=b"")
    at: float = field(default_factory=time.monotonic)


class Exchange:
    """One request being answered: what a subclass's `handle` writes its answer through."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._h = handler

    def json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self._h.send_response(status)
        self._h.send_header("Content-Type", "application/json")
        self._h.send_header("Content-Length", str(len(data)))
        self._h.end_headers()
        self._h.wfile.write(data)

    def sse(self, events: Iterable[tuple[str | None, Any]]) -> None:
        """A chunked `text/event-stream`; an event's data is JSON unless it is already a str."""
        self._h.send_response(200)
        self._h.send_header("Content-Type", "text/event-stream")
        self._h.send_header("Cache-Control", "no-cache")
        self._h.send_header("Transfer-Encoding", "chunked")
        self._h.end_headers()
        for event, data in events:
            payload = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {event}\n" if event else "") + f"data: {payload}\n\n"
            chunk = frame.encode()
            self._h.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self._h.wfile.flush()
        self._h.wfile.write(b"0\r\n\r\n")
        self._h.wfile.flush()


class MockServer:
    """Use as ``with Mock() as mock:``; point the client at ``mock.url``."""

    name = "mock"

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[Recorded] = []
        self._unknown: list[tuple[str, str]] = []
        self._queue: deque[Reply | Responder] = deque()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- what a subclass provides ------------------------------------------------------------------
    def handle(self, request: Recorded, out: Exchange) -> bool:
        """Answer `request` through `out`; return False when the path is not served (404)."""
        raise NotImplementedError

    def is_main(self, body: JSON) -> bool:
        """Whether a model request is the conversation (consumes a scripted reply) or a side call."""
        return True

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> Self:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name=self.name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None, "mock not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- scripting ---------------------------------------------------------------------------------
    def script(self, *replies: Reply | Responder) -> None:
        """Queue replies for the next main model requests, in order (anything else gets "ok")."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def reply_for(self, body: JSON) -> Reply:
        item: Reply | Responder | None = None
        if self.is_main(body):
            with self._lock:
                if self._queue:
                    item = self._queue.popleft()
        if callable(item):
            item = item(body)
        return item if isinstance(item, Reply) else text("ok")

    # -- what was recorded -------------------------------------------------------------------------
    @property
    def requests(self) -> list[Recorded]:
        with self._lock:
            return list(self._requests)

    @property
    def unknown(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self._unknown)

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self._requests.append(request)

    def _not_served(self, request: Recorded) -> None:
        with self._lock:
            self._unknown.append((request.method, request.path))


def _handler(mock: MockServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            data = gzip.decompress(raw) if encoding == "gzip" else raw
            data = zlib.decompress(data) if encoding == "deflate" else data
            try:
                body = json.loads(data) if data else None
            except ValueError:
                body = None
            parts = urlsplit(self.path)
            request = Recorded(
                self.command,
                parts.path,
                parts.query,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                raw,
            )
            mock._record(request)  # before answering: the client may exit on the last byte
            if not mock.handle(request, Exchange(self)):
                mock._not_served(request)
                Exchange(self).json(
                    404, {"error": {"code": 404, "message": f"mock: {parts.path} not served"}}
                )

        do_GET = do_POST = do_PUT = do_DELETE = _serve

    return Handler
