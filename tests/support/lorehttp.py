"""Helpers for tests/http: `lore serve` as a real process on loopback, tokens, real SDK HTTP sessions."""

from __future__ import annotations

import logging
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import psycopg
import pytest
from mcp import Client, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation

from lore.core import local_secret
from lore.store import auth
from support.mcpclient import REQUEST_TIMEOUT

LORE = str(Path(sys.executable).parent / "lore")


def free_port() -> int:
    """A port nobody listens on at this instant (bind to 0, read it, close). Racy: another process
    can take it before the server binds it. Only for what cannot bind port 0 itself (`lore run`
    prints the URL before it binds); `start_server` lets `lore serve --port 0` choose."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# `lore serve` logs "serving http://HOST:PORT/mcp (...)" on stderr. With `--port 0` a server that
# binds first and then reports the bound port says which port it got; one that logs the configured
# port says ":0", and then the tests fall back to picking a port themselves.
SERVING = re.compile(r"serving (http://\S+?)/mcp\b")
STOP_TIMEOUT = 15.0  # SIGINT, then SIGKILL after this long
_port_zero: bool | None = None  # learned from the first server of the session


def stop_process(proc: subprocess.Popen[Any], timeout: float = STOP_TIMEOUT) -> None:
    """Stop one child by its PID: SIGINT (uvicorn shuts down cleanly), SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait(timeout=5)


@dataclass
class Server:
    """A `lore serve`: a child process, or the same app served by uvicorn on a thread of this
    process (see `start_server`); `alive` and `stop` say which. A context manager: stopped on exit."""

    port: int
    log: Path
    env: dict[str, str]
    args: list[str]
    alive: Callable[[], bool]
    _stop: Callable[[], None] | None
    pid: int | None = None  # a `lore serve` process's (None: served in this process)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def logs(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def secret(self) -> str:
        """The local secret a local `lore serve` asks of /api and /mcp (lore.core.local_secret)."""
        return local_secret.read_or_create(self.env)

    def local(self, workspace: Path | str | None = None) -> dict[str, str]:
        """The headers of a local-mode client: the local secret, and the workspace when given."""
        return bearer(self.secret, workspace)

    def stop(self) -> None:
        stop, self._stop = self._stop, None
        if stop is not None:
            stop()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _spawn(env: dict[str, str], log: Path, port: int, args: tuple[str, ...]) -> subprocess.Popen[bytes]:
    handle = open(log, "ab")  # noqa: SIM115 - the child writes to it; closed right after spawning
    try:
        return subprocess.Popen(
            [LORE, "serve", "--port", str(port), *args], env=env, stdout=handle, stderr=handle
        )
    finally:
        handle.close()


def _reported_port(proc: subprocess.Popen[bytes], log: Path, offset: int, deadline: float) -> int | None:
    """The port in the server's "serving http://...:PORT/mcp" line (0 when it logs the configured
    port), or None when the process exited first."""
    while time.monotonic() < deadline:
        found = SERVING.search(log.read_text(errors="replace")[offset:])
        if found:
            return urlsplit(found.group(1)).port or 0
        if proc.poll() is not None:
            return None
        time.sleep(0.05)
    raise AssertionError(f"lore serve logged no serving line within the deadline:\n{log.read_text()}")


def start_server(
    env: dict[str, str],
    log: Path,
    *args: str,
    ready: str = "/readyz",
    timeout: float = 30,
    process: bool = False,
) -> Server:
    """`lore serve ARGS` on a port of its own, once `ready` answers 200 (bounded by `timeout`).

    By default the app `lore serve` builds (`lore.cli.serving.app_for`) over a runtime of `env`,
    served by uvicorn on a thread of this process, on a socket bound to port 0: the same HTTP, the
    same database, without a second of interpreter start per test. Its log lines go to `log` as
    they would from the process. `process=True` runs the real `lore serve` (what a test of the
    process itself needs: its stderr, its signals, its own LISTEN connection, two replicas).

    A process gets `--port 0` when it reports the port it bound (no race with other processes for
    a port); otherwise a port picked by bind-and-close, tried again if someone else took it first."""
    if not process:
        return _start_in_process(env, log, args, ready, time.monotonic() + timeout)
    global _port_zero
    deadline = time.monotonic() + timeout
    attempts = 0
    while True:
        attempts += 1
        offset = log.stat().st_size if log.exists() else 0
        zero = _port_zero is not False and "--public-url" not in args
        port = 0 if zero else free_port()
        proc = _spawn(env, log, port, args)
        try:
            if zero:
                reported = _reported_port(proc, log, offset, deadline)
                if reported == 0:  # logs the configured port: cannot tell which it bound
                    _port_zero = False
                    stop_process(proc)
                    continue
                if reported is not None:
                    _port_zero, port = True, reported
            server = Server(port, log, env, list(args), _running(proc), partial(stop_process, proc), proc.pid)
            if _wait_ready(server, ready, deadline):
                return server
            taken = "address already in use" in log.read_text(errors="replace")[offset:].lower()
            if taken and not zero and attempts < 3:  # bind-and-close lost the race: another port
                continue
            raise AssertionError(f"lore serve exited {proc.returncode}:\n{server.logs()}")
        except BaseException:
            stop_process(proc)
            raise


def _running(proc: subprocess.Popen[bytes]) -> Callable[[], bool]:
    return lambda: proc.poll() is None


def _options(args: tuple[str, ...]) -> tuple[dict[str, Any], str]:
    """`lore serve`'s flags as lore.http.app.Options fields, and the log level."""
    known = {"--sign-in": "sign_in", "--oauth": "oauth", "--stateless": "stateless"}
    fields: dict[str, Any] = {"host": "127.0.0.1"}
    level, rest = "warning", list(args)
    while rest:
        flag = rest.pop(0)
        if flag in known:
            fields[known[flag]] = True
        elif flag in ("--host", "--public-url", "--log-level", "--log-format") and rest:
            value = rest.pop(0)
            if flag == "--log-level":
                level = value
            elif flag == "--log-format":
                fields["json_logs"] = value == "json"
            else:
                fields[flag[2:].replace("-", "_")] = value
        else:
            raise AssertionError(f"start_server does not know {flag!r} in-process: use process=True")
    fields["sign_in"] = fields.get("sign_in", False) or fields.get("oauth", False)
    return fields, level


def _log_to(path: Path, level: str) -> logging.FileHandler:
    """What `lore serve` logs to stderr (lore's own INFO lines, everything else at `level`), into
    the test's log file, in the process's format."""
    threshold = logging.getLevelName(level.upper())
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("lore: %(message)s"))
    handler.addFilter(lambda r: r.levelno >= (logging.INFO if r.name.split(".")[0] == "lore" else threshold))
    return handler


def _start_in_process(
    env: dict[str, str], log: Path, args: tuple[str, ...], ready: str, deadline: float
) -> Server:
    import uvicorn

    from lore.cli.serving import app_for, listen
    from lore.http.app import Options
    from lore.service.runtime import Runtime

    fields, level = _options(args)
    sock = listen(fields["host"], 0)
    port = int(sock.getsockname()[1])
    handler = _log_to(log, level)
    root, lore_log = logging.getLogger(), logging.getLogger("lore")
    levels = root.level, lore_log.level
    root.addHandler(handler)
    root.setLevel(min(root.getEffectiveLevel(), logging.getLevelName(level.upper())))
    lore_log.setLevel(logging.INFO)
    state = Runtime(env=dict(env), transport="http")
    uv: uvicorn.Server | None = None
    thread: threading.Thread | None = None

    def stop() -> None:
        if uv is not None and thread is not None:
            uv.should_exit = True
            thread.join(STOP_TIMEOUT)
            assert not thread.is_alive(), "the in-process lore serve did not stop"
        sock.close()
        state.close()
        root.removeHandler(handler)
        handler.close()
        root.setLevel(levels[0])
        lore_log.setLevel(levels[1])

    try:
        app = app_for(state, Options(port=port, **fields))
        config = uvicorn.Config(
            app, host=fields["host"], port=port, log_level=level, log_config=None, proxy_headers=False
        )
        uv = uvicorn.Server(config)
        thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, name="lore-serve", daemon=True)
        thread.start()
        server = Server(port, log, env, list(args), thread.is_alive, stop)
        if not _wait_ready(server, ready, deadline):
            raise AssertionError(f"the in-process lore serve stopped:\n{server.logs()}")
        return server
    except BaseException:
        stop()
        raise


def _wait_ready(server: Server, path: str, deadline: float) -> bool:
    """True once `path` answers 200; False when the server stopped; AssertionError at the deadline."""
    while time.monotonic() < deadline:
        if not server.alive():
            return False
        try:
            if httpx2.get(f"{server.url}{path}", timeout=2).status_code == 200:
                return True
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"lore serve did not become ready at {path}:\n{server.logs()}")


def _signed_in(lore_env: dict[str, str], tmp_path: Path, *, process: bool) -> Iterator[Server]:
    args = ("--sign-in", "--log-level", "debug")
    with start_server(lore_env, tmp_path / "serve.log", *args, process=process) as server:
        yield server


@pytest.fixture
def signed_in(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    """`lore serve --sign-in --log-level debug` (in this process): everything it logs lands in one file."""
    yield from _signed_in(lore_env, tmp_path, process=False)


@pytest.fixture
def signed_in_process(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    """The same as a real `lore serve` process: its stdout and stderr, every line, in one file."""
    yield from _signed_in(lore_env, tmp_path, process=True)


def token(conn: psycopg.Connection, user: str, **kwargs: Any) -> str:
    _, secret = auth.create(conn, user, **kwargs)
    conn.commit()
    return secret


def run_lore(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([LORE, *args], env=env, input=stdin, capture_output=True, text=True, timeout=60)


def push(conn: psycopg.Connection, user: str, toml: str, home: str = "/home/x") -> None:
    from lore.store import userconfig

    userconfig.push(conn, user, toml, home)
    conn.commit()


OnResponse = Callable[[httpx2.Response], Awaitable[None]]


def _http(headers: dict[str, str], on_response: OnResponse | None) -> httpx2.AsyncClient:
    hooks = {"response": [on_response]} if on_response is not None else {}
    return httpx2.AsyncClient(headers=headers, timeout=30, event_hooks=hooks)


@asynccontextmanager
async def mcp_session(
    url: str, headers: dict[str, str], *, client: str = "http-test", on_response: OnResponse | None = None
) -> AsyncIterator[ClientSession]:
    """A handshake-era session (`initialize`) over streamable HTTP; `on_response` sees every HTTP
    answer (the SDK's client reports any error status as one -32603 error)."""
    http = _http(headers, on_response)
    async with (
        http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(
            read,
            write,
            read_timeout_seconds=REQUEST_TIMEOUT,
            client_info=Implementation(name=client, version="1"),
        ) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def modern_session(
    url: str,
    headers: dict[str, str],
    *,
    client: str = "http-test-2026",
    on_response: OnResponse | None = None,
) -> AsyncIterator[ClientSession]:
    """A client of the 2026-07-28 protocol era (the SDK's `Client` pinned to it): no `initialize`, no
    session id; each request names its client in its own envelope."""
    http = _http(headers, on_response)
    async with (
        http,
        Client(
            streamable_http_client(f"{url}/mcp", http_client=http),
            mode="2026-07-28",
            read_timeout_seconds=REQUEST_TIMEOUT,
            client_info=Implementation(name=client, version="2"),
        ) as connected,
    ):
        yield connected.session


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
