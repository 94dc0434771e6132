"""Malformed or oversized requests to `/api` get a 400/413/422 with `{"error", "hint"}`, never a 500,
and a body over the cap is refused before it is read whole. Before: a 100,000-deep JSON body gave a
500 (RecursionError), a NUL in `?workspace=` a 500 ("embedded null byte"), and a 1.5 GiB POST was read
into memory before its 400."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, bearer, token


@pytest.fixture
def alice(signed_in: Server, conn: psycopg.Connection, tmp_path: Path) -> dict[str, str]:
    return bearer(token(conn, "alice"), tmp_path)


def _assert_refusal(answer: httpx2.Response, status: int) -> None:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["error"] and body["hint"], body


def test_deep_json_is_a_400(signed_in: Server, alice: dict[str, str], conn: psycopg.Connection) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    answer = httpx2.post(
        f"{signed_in.url}/api/facts", content=deep, headers={**alice, "Content-Type": "application/json"}
    )
    _assert_refusal(answer, 400)
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)


@pytest.mark.parametrize("workspace", ["/tmp/a\x00b", "/tmp/\n", "/" + "a" * 5000])
def test_a_workspace_that_is_no_path_is_a_400(
    signed_in: Server, alice: dict[str, str], workspace: str
) -> None:
    answer = httpx2.get(f"{signed_in.url}/api/facts", params={"workspace": workspace}, headers=alice)
    _assert_refusal(answer, 400)


def test_a_body_declared_too_large_is_refused_before_it_is_sent(
    signed_in: Server, alice: dict[str, str]
) -> None:
    """A client says 1.5 GiB is coming and sends 1 KiB: the answer (413) comes without waiting for
    the rest, and the connection is not kept reading."""
    head = (
        f"POST /api/facts HTTP/1.1\r\nHost: 127.0.0.1:{signed_in.port}\r\n"
        f"Authorization: {alice['Authorization']}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {3 * 2**29}\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", signed_in.port), timeout=10) as raw:
        raw.sendall(head + b"x" * 1024)
        started = time.monotonic()
        received = b""
        while b'"hint"' not in received and time.monotonic() - started < 5:
            chunk = raw.recv(4096)
            if not chunk:
                break
            received += chunk
        answer = received.decode(errors="replace")
    assert answer.startswith("HTTP/1.1 413"), answer[:200]
    assert time.monotonic() - started < 5
    assert '"hint"' in answer


def test_a_streamed_body_over_the_cap_is_a_413(signed_in: Server, alice: dict[str, str]) -> None:
    def chunks() -> object:
        for _ in range(64):  # 4 MiB in all, no Content-Length
            yield b"x" * 65536

    answer = httpx2.post(
        f"{signed_in.url}/api/facts",
        content=chunks(),  # type: ignore[arg-type]
        headers={**alice, "Content-Type": "application/json"},
        timeout=30,
    )
    _assert_refusal(answer, 413)
    assert httpx2.get(f"{signed_in.url}/healthz").status_code == 200
