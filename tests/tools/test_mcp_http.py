"""`lore serve` / `lore run`: MCP over streamable HTTP on loopback, the workspace from the
X-Lore-Workspace header or the client's roots, through the SDK's HTTP client."""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.context import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation, ListRootsResult, Root
from pydantic import FileUrl
from support.lorehttp import LORE, Server, start_server, stop_process
from support.mcpclient import call, ok, text

from lore.core import local_secret

pytestmark = pytest.mark.anyio


def printed_port(out: Path, proc: subprocess.Popen[bytes], log: Path, timeout: float = 60) -> int:
    """The port in the `claude mcp add ... http://127.0.0.1:PORT/mcp` line `lore run` prints."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", out.read_text())
        if found:
            return int(found.group(1))
        assert proc.poll() is None, f"lore exited {proc.returncode}:\n{log.read_text()}"
        time.sleep(0.1)
    raise AssertionError(f"lore run printed no URL:\n{log.read_text()}")


def wait_healthy(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"lore exited {proc.returncode}:\n{log.read_text()}"
        try:
            if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.HTTPError:
            time.sleep(0.1)
    raise AssertionError(f"lore did not become healthy:\n{log.read_text()}")


@pytest.fixture
def served(tmp_path: Path, lore_env: dict[str, str]) -> Iterator[tuple[Server, dict[str, Path]]]:
    dirs = {name: tmp_path / name for name in ("alpha", "beta")}
    for d in dirs.values():
        d.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "alpha"\npaths = ["{dirs["alpha"]}"]\n'
        f'[[space]]\nid = "beta"\npaths = ["{dirs["beta"]}"]\n'
    )
    with start_server(lore_env, tmp_path / "serve.log", ready="/healthz") as server:
        yield server, dirs


async def _session(server: Server, headers: dict[str, str], roots: list[Path] | None = None) -> Any:
    async def list_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(f"file://{r}")) for r in roots or ()])

    client = httpx2.AsyncClient(headers={**server.local(), **headers}, timeout=30)
    transport = streamable_http_client(f"{server.url}/mcp", http_client=client)
    return client, transport, (list_roots if roots is not None else None)


async def test_header_chooses_the_space(
    served: tuple[Server, dict[str, Path]], conn: psycopg.Connection
) -> None:
    server, dirs = served
    for name in ("alpha", "beta"):
        client, transport, _ = await _session(server, {"X-Lore-Workspace": str(dirs[name])})
        async with (
            client,
            transport as (read, write),
            ClientSession(read, write, client_info=Implementation(name="http-test", version="1")) as s,
        ):
            await s.initialize()
            assert (await ok(s, "remember_fact", statement=f"{name} over http")).structured_content[
                "space"
            ] == name
            assert f"{name} over http" in text(await ok(s, "recall_facts"))
            other = "beta" if name == "alpha" else "alpha"
            assert f"{other} over http" not in text(await ok(s, "recall_facts"))
    rows = set(conn.execute("SELECT space, source FROM facts").fetchall())
    assert rows == {("alpha", "http-test"), ("beta", "http-test")}


async def test_roots_when_no_header_and_error_when_neither(served: tuple[Server, dict[str, Path]]) -> None:
    server, dirs = served
    client, transport, roots_cb = await _session(server, {}, roots=[dirs["beta"]])
    async with (
        client,
        transport as (read, write),
        ClientSession(read, write, list_roots_callback=roots_cb) as s,
    ):
        await s.initialize()
        assert (await ok(s, "remember_fact", statement="via roots")).structured_content["space"] == "beta"
    client, transport, _ = await _session(server, {})
    async with client, transport as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        result = await call(s, "remember_fact", statement="nowhere")
        assert result.is_error and "X-Lore-Workspace" in text(result)


def test_serve_refuses_non_loopback_without_sign_in(lore_env: dict[str, str]) -> None:
    done = subprocess.run(
        [LORE, "serve", "--host", "0.0.0.0"], env=lore_env, capture_output=True, text=True, timeout=60
    )  # a regression that served anyway fails here after 60 s instead of hanging the suite
    assert done.returncode == 1 and "loopback" in done.stderr and "127.0.0.1" in done.stderr


def test_quickstart_prepares_everything_and_prints_the_line(tmp_path: Path, lore_env: dict[str, str]) -> None:
    """What `make run` runs: a starter config when none, the database up, then HTTP MCP."""
    env = {**lore_env, "LORE_PORT": "0"}  # `lore run` binds first, then prints the port it got
    assert not Path(env["LORE_CONFIG"]).exists()
    out_path, err_path = tmp_path / "run.out", tmp_path / "run.err"
    with open(out_path, "wb") as stdout, open(err_path, "wb") as stderr:  # a full pipe cannot block it
        proc = subprocess.Popen([LORE, "run"], env=env, stdout=stdout, stderr=stderr)
    try:
        port = printed_port(out_path, proc, err_path)
        wait_healthy(port, proc, err_path)
        assert Path(env["LORE_CONFIG"]).exists()
    finally:
        stop_process(proc)
    out = out_path.read_text()
    assert f"claude mcp add --transport http lore http://127.0.0.1:{port}/mcp" in out
    assert "X-Lore-Workspace" in out
    secret = local_secret.read_or_create(env)  # never on a command line: the line names ${LORE_TOKEN}
    assert "--header 'Authorization: Bearer ${LORE_TOKEN}'" in out and secret not in out
