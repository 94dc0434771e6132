"""Helpers for tests/http: `lore serve` as a real process on loopback, tokens, real SDK HTTP sessions."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from lore import auth

LORE = str(Path(sys.executable).parent / "lore")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    port: int
    proc: subprocess.Popen[bytes]
    log: Path
    env: dict[str, str]
    args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def logs(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def start_server(env: dict[str, str], log: Path, *args: str) -> Server:
    port = free_port()
    handle = open(log, "ab")  # noqa: SIM115 - the child writes to it; closed right after spawning
    try:
        proc = subprocess.Popen(
            [LORE, "serve", "--port", str(port), *args], env=env, stdout=handle, stderr=handle
        )
    finally:
        handle.close()
    server = Server(port, proc, log, env, list(args))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"lore serve exited {proc.returncode}:\n{server.logs()}")
        try:
            if httpx2.get(f"{server.url}/readyz", timeout=2).status_code == 200:
                return server
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    server.stop()
    raise AssertionError(f"lore serve did not become ready:\n{server.logs()}")


@pytest.fixture
def signed_in(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    """`lore serve --sign-in --log-level debug`: everything it logs lands in one file."""
    server = start_server(lore_env, tmp_path / "serve.log", "--sign-in", "--log-level", "debug")
    try:
        yield server
    finally:
        server.stop()


def token(conn: psycopg.Connection, user: str, **kwargs: Any) -> str:
    _, secret = auth.create(conn, user, **kwargs)
    conn.commit()
    return secret


def run_lore(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([LORE, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


def push(conn: psycopg.Connection, user: str, toml: str, home: str = "/home/x") -> None:
    from lore import userconfig

    userconfig.push(conn, user, toml, home)
    conn.commit()


@asynccontextmanager
async def mcp_session(
    url: str, headers: dict[str, str], *, client: str = "http-test"
) -> AsyncIterator[ClientSession]:
    http = httpx2.AsyncClient(headers=headers, timeout=30)
    async with (
        http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, client_info=Implementation(name=client, version="1")) as session,
    ):
        await session.initialize()
        yield session


def bearer(secret: str, workspace: Path | str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {secret}"}
    if workspace is not None:
        headers["X-Lore-Workspace"] = str(workspace)
    return headers


def two_space_config(base: Path) -> str:
    """Spaces `work` (base/work) and `home` (base/home, the default), as each user writes them."""
    return (
        'default_space = "home"\n'
        f'[[space]]\nid = "work"\npaths = ["{base}/work"]\nreads_from = ["home"]\naccepts_from = ["home"]\n'
        f'[[space]]\nid = "home"\npaths = ["{base}/home"]\naccepts_from = ["work"]\n'
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A directory tree both users' configs point at: the same paths, different memories."""
    for name in ("work", "home"):
        (tmp_path / "proj" / name).mkdir(parents=True)
    return tmp_path / "proj"
