"""stdio transport that answers every malformed request instead of dropping it.

The SDK's stdio reader turns a line it cannot validate into an exception that the server only logs:
a request whose JSON holds a lone surrogate (`"\\ud800"`, valid JSON that pydantic refuses), a wrong
`jsonrpc` version or params of the wrong shape then gets no answer at all, and the agent waits on it
until its own timeout. Here every such line whose `id` can still be read gets a JSON-RPC error that
says what was wrong (-32700 unreadable JSON, -32600 invalid request); the server goes on serving.
Lines with no id (notifications, garbage) are logged and dropped, as JSON-RPC prescribes.

We read stdin ourselves (keeping each raw line, to recover its id) and let the SDK claim stdout.
Like the SDK, fd 0 is pointed at /dev/null while serving, so no child process can read the wire.
"""

from __future__ import annotations

import json
import logging
import os
from collections import deque
from collections.abc import AsyncIterator
from io import TextIOWrapper
from types import TracebackType
from typing import Any, Self, cast

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import ErrorData, JSONRPCError

log = logging.getLogger("lore.mcp")
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


class _Lines:
    """Async lines of the protocol's stdin; remembers each raw line until the guard consumes it."""

    def __init__(self, stream: TextIOWrapper, raw: deque[str]) -> None:
        self._file = anyio.wrap_file(stream)
        self._raw = raw

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async for line in self._file:
            self._raw.append(line)
            yield line


class _Guard:
    """The read stream as the server sees it: messages pass, malformed requests are answered here."""

    def __init__(self, inner: Any, write: Any, raw: deque[str]) -> None:
        self._inner = inner
        self._write = write
        self._raw = raw

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            line = self._raw.popleft() if self._raw else ""
            if not isinstance(item, Exception):
                return cast(SessionMessage, item)
            await self._answer(item, line)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> Self:
        await self._inner.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return cast("bool | None", await self._inner.__aexit__(exc_type, exc, tb))

    async def _answer(self, error: Exception, line: str) -> None:
        reply = answer_for(line)
        if reply is None:
            log.warning("ignored an unreadable message on stdin (%s)", type(error).__name__)
            return
        await self._write.send(SessionMessage(reply))


def answer_for(line: str) -> JSONRPCError | None:
    """The error response for a line the SDK could not take, when it is a request (has an id)."""
    try:
        data = json.loads(line)  # Python's parser takes lone surrogates; pydantic's does not
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    ident = data.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int | str) or "method" not in data:
        return None
    if _has_lone_surrogate(data):
        code, message = (
            PARSE_ERROR,
            (
                "Parse error: the request holds invalid unicode (a lone UTF-16 surrogate such as \\ud800). "
                "Send valid UTF-8 text."
            ),
        )
    elif data.get("jsonrpc") != "2.0":
        code, message = INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0".'
    else:
        code, message = (
            INVALID_REQUEST,
            (
                f"Invalid Request: {str(data.get('method'))[:60]!r} with params of the wrong shape "
                "(params must be an object)."
            ),
        )
    return JSONRPCError(jsonrpc="2.0", id=ident, error=ErrorData(code=code, message=message))


def _has_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


async def serve(server: Server[Any]) -> None:
    """Run the low-level server over this process's stdin/stdout with the guard in front."""
    wire = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # children (git, psql) must never read the protocol's bytes
    os.close(devnull)
    raw: deque[str] = deque()
    text = TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace")
    try:
        stdin = cast("anyio.AsyncFile[str]", _Lines(text, raw))
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            guarded = _Guard(read_stream, write_stream, raw)
            await server.run(guarded, write_stream, server.create_initialization_options())
    finally:
        text.close()
