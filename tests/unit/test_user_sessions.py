"""lore.http.limits.UserLimits keeps each user's open MCP sessions itself (it no longer reads the
SDK session manager's private table): a session counts from the answer that issued it until a
DELETE ends it, the SDK answers 404 for it, or it was idle (no request in flight) for `idle`
seconds, as the SDK's own session manager keeps it."""

from __future__ import annotations

import itertools
from collections.abc import MutableMapping
from typing import Any

import anyio
import pytest

from lore.http.limits import Buckets, UserLimits

pytestmark = pytest.mark.anyio
_ids = itertools.count(1)


class _User:
    def __init__(self, subject: str) -> None:
        self.access_token = type("T", (), {"subject": subject})()


class _Sdk:
    """Answers an initialize with a new session id, DELETE with 200, an unknown session with 404;
    a GET waits for `release` (a stream held open)."""

    def __init__(self) -> None:
        self.live: set[str] = set()
        self.release = anyio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        session = dict(scope["headers"]).get(b"mcp-session-id", b"").decode()
        headers: list[tuple[bytes, bytes]] = []
        status = 200
        if not session:
            session = f"s{next(_ids)}"
            self.live.add(session)
            headers.append((b"mcp-session-id", session.encode()))
        elif session not in self.live:
            status = 404
        elif scope["method"] == "DELETE":
            self.live.discard(session)
        elif scope["method"] == "GET":
            await self.release.wait()
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b""})


async def _call(app: UserLimits, method: str, session: str | None = None) -> tuple[int, str | None]:
    headers = [(b"mcp-session-id", session.encode())] if session else []
    scope = {"type": "http", "method": method, "headers": headers, "user": _User("alice")}
    got: dict[str, Any] = {}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            got["status"] = message["status"]
            got["id"] = dict(message["headers"]).get(b"mcp-session-id", b"").decode() or None

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    await app(scope, receive, send)
    return got["status"], got["id"]


def _limits(sdk: _Sdk, idle: float = 60) -> UserLimits:
    return UserLimits(sdk, sessions=2, buckets=Buckets(1000, 1000), idle=idle)  # type: ignore[arg-type]


async def test_a_deleted_session_frees_its_place_even_with_a_stream_still_open() -> None:
    sdk = _Sdk()
    limits = _limits(sdk)
    (_, first), (_, second) = await _call(limits, "POST"), await _call(limits, "POST")
    assert (await _call(limits, "POST"))[0] == 429
    async with anyio.create_task_group() as group:
        group.start_soon(_call, limits, "GET", first)  # its stream, still open
        await anyio.sleep(0.01)
        assert (await _call(limits, "DELETE", first))[0] == 200
        sdk.release.set()  # the stream ends after the DELETE: the session stays ended
    assert (await _call(limits, "POST"))[0] == 200
    assert (await _call(limits, "POST"))[0] == 429
    assert second in sdk.live


async def test_a_session_the_sdk_no_longer_knows_or_left_idle_is_not_counted() -> None:
    sdk = _Sdk()
    limits = _limits(sdk, idle=0.05)
    (_, first), _ = await _call(limits, "POST"), await _call(limits, "POST")
    sdk.live.discard(first)  # ended by the SDK (say, its idle timer)
    assert (await _call(limits, "POST", first))[0] == 404
    assert (await _call(limits, "POST"))[0] == 200
    await anyio.sleep(0.06)
    assert (await _call(limits, "POST"))[0] == 200  # both others idle past 0.05 s
