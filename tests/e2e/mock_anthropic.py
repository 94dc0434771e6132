"""A tiny local mock of the Anthropic Messages API, enough for Claude Code in ``-p`` mode.

Every request is recorded (thread-safe). Replies to ``POST /v1/messages`` are scripted: tests queue
replies with :meth:`MockAnthropic.script`; those are consumed by *main conversation* requests only (by
default: the requests that carry ``tools``), so Claude Code's side requests (small-model title /
summary / quota calls) cannot eat a scripted ``tool_use``. Anything unscripted gets the text "ok".

Endpoints observed from Claude Code 2.1.332 with ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` are
answered; anything else is answered 404 and listed in :attr:`MockAnthropic.unknown` so a test run can
reveal new start-up calls.
"""

from __future__ import annotations

import gzip
import itertools
import json
import threading
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

JSON = dict[str, Any]

_ids = itertools.count(1)


def _next_id(prefix: str) -> str:
    return f"{prefix}_mock{next(_ids):06d}"


@dataclass(frozen=True)
class Reply:
    """One scripted assistant turn: a list of content blocks and a stop reason."""

    content: tuple[JSON, ...]
    stop_reason: str = "end_turn"


def text_reply(text: str = "ok") -> Reply:
    return Reply(content=({"type": "text", "text": text},))


def tool_use_reply(name: str, tool_input: JSON | None = None, *, tool_id: str | None = None) -> Reply:
    block = {"type": "tool_use", "id": tool_id or _next_id("toolu"), "name": name, "input": tool_input or {}}
    return Reply(content=(block,), stop_reason="tool_use")


Responder = Callable[[JSON], Reply | None]


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any  # parsed JSON (None when empty / not JSON)
    raw: bytes = field(repr=False, default=b"")


def default_is_main(body: JSON) -> bool:
    """Main conversation requests carry the agent's tool list; side requests carry none."""
    return bool(body.get("tools"))


# --------------------------------------------------------------------------------------------------
# helpers for assertions on recorded request bodies


def _content_text(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, str):
            yield block
            continue
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            yield str(block.get("text", ""))
        elif kind == "tool_result":
            yield from _content_text(block.get("content"))
        elif kind == "tool_use":
            yield json.dumps(block.get("input", {}), ensure_ascii=False)
        elif kind in ("thinking", "redacted_thinking"):
            continue
        elif "text" in block:
            yield str(block["text"])


def requests_text(req: JSON | RecordedRequest) -> str:
    """All system and message text of a Messages request, incl. tool_result contents and
    ``<system-reminder>`` blocks (Claude Code sends those as text blocks inside user turns)."""
    body = req.body if isinstance(req, RecordedRequest) else req
    if not isinstance(body, dict):
        return ""
    parts: list[str] = list(_content_text(body.get("system")))
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            parts.extend(_content_text(message.get("content")))
    return "\n".join(parts)


def tool_names(req: JSON | RecordedRequest) -> list[str]:
    body = req.body if isinstance(req, RecordedRequest) else req
    if not isinstance(body, dict):
        return []
    return [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]


def tool_results(req: JSON | RecordedRequest) -> list[JSON]:
    """The ``tool_result`` blocks of a request (each with ``tool_use_id``, ``content``, ``is_error``)."""
    body = req.body if isinstance(req, RecordedRequest) else req
    found: list[JSON] = []
    if not isinstance(body, dict):
        return found
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            found.extend(b for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return found


def tool_result_text(block: JSON) -> str:
    return "\n".join(_content_text(block.get("content")))


# --------------------------------------------------------------------------------------------------
# the server


class MockAnthropic:
    """Start with ``with MockAnthropic() as mock:``; point ``ANTHROPIC_BASE_URL`` at ``mock.url``."""

    def __init__(self, *, is_main: Callable[[JSON], bool] = default_is_main) -> None:
        self.is_main = is_main
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._unknown: list[tuple[str, str]] = []
        self._queue: deque[Reply | Responder] = deque()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> MockAnthropic:
        handler = _make_handler(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="mock-anthropic",
            daemon=True,
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

    def __enter__(self) -> MockAnthropic:
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
        """Queue replies for the next main-conversation requests, in order. A callable gets the
        request body and returns a Reply (or None: fall through to the default "ok")."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _reply_for(self, body: JSON) -> Reply:
        item: Reply | Responder | None = None
        if self.is_main(body):
            with self._lock:
                if self._queue:
                    item = self._queue.popleft()
        if callable(item):
            item = item(body)
        return item if isinstance(item, Reply) else text_reply("ok")

    # -- recorded data -----------------------------------------------------------------------------
    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _record_unknown(self, method: str, path: str) -> None:
        with self._lock:
            self._unknown.append((method, path))

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in arrival order (a snapshot)."""
        with self._lock:
            return list(self._requests)

    @property
    def unknown(self) -> list[tuple[str, str]]:
        """(method, path) of every request answered 404."""
        with self._lock:
            return list(self._unknown)

    def messages(self) -> list[JSON]:
        """Bodies of all ``POST /v1/messages`` requests (main and side), in order."""
        return [
            r.body
            for r in self.requests
            if r.method == "POST" and r.path == "/v1/messages" and isinstance(r.body, dict)
        ]

    def main_messages(self) -> list[JSON]:
        """Bodies of the main conversation requests (by default: those that carry tools)."""
        return [b for b in self.messages() if self.is_main(b)]

    def side_messages(self) -> list[JSON]:
        return [b for b in self.messages() if not self.is_main(b)]


# --------------------------------------------------------------------------------------------------
# HTTP handling


def _sse_events(body: JSON, reply: Reply, message_id: str) -> Iterable[tuple[str, JSON]]:
    model = str(body.get("model") or "claude-mock")
    yield (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": message_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 10,
                    "output_tokens": 1,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                },
            },
        },
    )
    for index, block in enumerate(reply.content):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]},
                },
            )
        elif block["type"] == "tool_use":
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                },
            )
        else:  # pragma: no cover - only text/tool_use are scripted
            raise ValueError(f"unsupported block type {block['type']!r}")
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _message_json(body: JSON, reply: Reply, message_id: str) -> JSON:
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": str(body.get("model") or "claude-mock"),
        "content": [dict(b) for b in reply.content],
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }


def _make_handler(mock: MockAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive; streaming uses chunked transfer encoding

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet

        # -- plumbing ----------------------------------------------------------------------------
        def _read_body(self) -> tuple[bytes, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            encoding = (self.headers.get("Content-Encoding") or "").lower()
            data = raw
            if encoding == "gzip":
                data = gzip.decompress(raw)
            elif encoding == "deflate":
                data = zlib.decompress(raw)
            try:
                parsed = json.loads(data) if data else None
            except ValueError:
                parsed = None
            return raw, parsed

        def _record(self, raw: bytes, parsed: Any) -> str:
            parts = urlsplit(self.path)
            mock._record(
                RecordedRequest(
                    method=self.command,
                    path=parts.path,
                    query=parts.query,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=parsed,
                    raw=raw,
                )
            )
            return parts.path

        def _send_json(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", _next_id("req"))
            self.end_headers()
            self.wfile.write(data)

        def _not_found(self, path: str) -> None:
            mock._record_unknown(self.command, path)
            self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})

        def _stream(self, body: JSON, reply: Reply) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("request-id", _next_id("req"))
            self.end_headers()
            for event, payload in _sse_events(body, reply, _next_id("msg")):
                chunk = f"event: {event}\ndata: {json.dumps(payload)}\n\n".encode()
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        # -- verbs -------------------------------------------------------------------------------
        def do_POST(self) -> None:
            raw, parsed = self._read_body()
            path = self._record(raw, parsed)
            body: JSON = parsed if isinstance(parsed, dict) else {}
            if path == "/v1/messages":
                reply = mock._reply_for(body)
                if body.get("stream"):
                    self._stream(body, reply)
                else:
                    self._send_json(200, _message_json(body, reply, _next_id("msg")))
            elif path == "/v1/messages/count_tokens":
                self._send_json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
            else:
                self._not_found(path)

        def do_GET(self) -> None:
            path = self._record(b"", None)
            self._not_found(path)

        def do_HEAD(self) -> None:
            path = self._record(b"", None)
            mock._record_unknown("HEAD", path)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    return Handler
