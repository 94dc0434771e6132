"""`lore mcp` (stdio), `lore serve` (streamable HTTP) and `lore run` (the quick start).

`lore serve` and `lore run` bind their socket first and only then say they are up (a taken port is
one line on stderr with a free one to use instead); uvicorn serves on that socket."""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import socket
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lore.core.errors import InvalidInput, Refused

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from lore.http.app import Options
    from lore.service.runtime import Runtime

DEFAULT_PORT = 8765


def _logging(level: str = "warning", json_logs: bool = False) -> None:
    # stdout belongs to the MCP protocol on stdio: log to stderr, never the environment.
    logging.basicConfig(stream=sys.stderr, level=level.upper(), format="lore: %(message)s")
    logging.getLogger("lore").setLevel(logging.INFO)
    if json_logs:
        for handler in logging.getLogger().handlers:
            handler.setFormatter(JsonLines())


class JsonLines(logging.Formatter):
    """`lore serve --log-format json`: each record one JSON object (time, level, logger, message,
    and a request's fields from lore.http.observe). What the message says is unchanged: lore's
    log lines never hold a token or the environment."""

    def format(self, record: logging.LogRecord) -> str:
        import json
        from datetime import UTC, datetime

        line: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "pid": record.process,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            line.update(fields)
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            first = str(error).strip().splitlines()
            line["error"] = f"{type(error).__name__}: {first[0] if first else ''}"
            frames = traceback.extract_tb(record.exc_info[2])
            ours = [f for f in frames if "/lore/" in f.filename] or frames
            if ours:
                line["where"] = (
                    f"{ours[-1].filename.rsplit('/lore/', 1)[-1]}:{ours[-1].lineno} {ours[-1].name}"
                )
        return json.dumps(line, ensure_ascii=False, default=str)


def stdio(workspace: str | None) -> int:
    _logging()
    from lore.mcp.server import create_server
    from lore.service.runtime import Runtime

    state = Runtime(env=dict(os.environ), transport="stdio", workspace_arg=workspace)
    server = create_server(state)
    try:
        server.run("stdio")
    finally:
        state.close()
    return 0


def port_of(port: int | None, env: Mapping[str, str]) -> int:
    """`--port` if given, else `$LORE_PORT`, else 8765."""
    if port is None:
        raw = env.get("LORE_PORT", "").strip()
        if not raw:
            return DEFAULT_PORT
        try:
            port = int(raw)
        except ValueError:
            raise InvalidInput(
                f"LORE_PORT={raw!r} is not a port number",
                f"Set LORE_PORT to a number from 0 to 65535 (0: any free port); unset: {DEFAULT_PORT}.",
            ) from None
    if not 0 <= port <= 65535:
        raise InvalidInput(f"port {port} is out of range", "Use a port from 0 to 65535 (0: any free port).")
    return port


def listen(host: str, port: int, retry: str = "use --port {port}") -> socket.socket:
    """A listening socket on host:port, before anything says the server is up. A taken port is one
    line (no hint line): `retry` says how to ask for the free port it names."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: TIME_WAIT is fine
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            free = _free_port(host, family, port)
            raise Refused(
                f"port {port} on {host} is taken (another lore serve, or another program); "
                f"port {free} is free: {retry.format(port=free)}"
            ) from None
        raise Refused(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            "Use a port above 1023 that is free (`--port 0` picks one), on an address of this machine.",
        ) from None
    return sock


def _free_port(host: str, family: socket.AddressFamily, taken: int) -> int:
    """A port free right now: the next few after the taken one, else any the kernel picks."""
    candidates = [p for p in range(taken + 1, taken + 21) if p <= 65535] if taken else []
    for candidate in [*candidates, 0]:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, candidate))
            except OSError:
                continue
            return int(probe.getsockname()[1])
    return 0


def http(
    host: str,
    port: int | None,
    *,
    sign_in: bool = False,
    oauth: bool = False,
    public_url: str | None = None,
    stateless: bool = False,
    log_level: str = "warning",
    json_logs: bool = False,
    sock: socket.socket | None = None,
    announce: Callable[[str], None] | None = None,
) -> int:
    """`lore serve`. Without sign-in: loopback only, one user, the local config file. With
    `--sign-in`: every request needs a bearer token; each user has their own spaces.

    `sock`: an already listening socket (`lore run` binds before preparing the database);
    `announce`: called with the base URL once the socket listens and the app is built."""
    sign_in = sign_in or oauth
    if not sign_in and not _loopback(host):
        if sock is not None:
            sock.close()
        raise Refused(
            f"Refusing to serve on {host}: without sign-in lore binds loopback only "
            "(anyone who reached it could read and write memory).",
            "Use --host 127.0.0.1 (the default), or add --sign-in (every request then needs a token "
            "from `lore token create USER`).",
        )
    if sock is None:
        sock = listen(host, port_of(port, os.environ))
    try:
        options = (sign_in, oauth, public_url, stateless, json_logs)
        return _serve(sock, host, options, log_level, announce)
    finally:
        sock.close()


def _serve(
    sock: socket.socket,
    host: str,
    options: tuple[bool, bool, str | None, bool, bool],
    log_level: str,
    announce: Callable[[str], None] | None,
) -> int:
    sign_in, oauth, public_url, stateless, json_logs = options
    _logging(log_level, json_logs)
    import uvicorn

    from lore.http.app import Options
    from lore.service import metrics
    from lore.service.runtime import Runtime

    port = int(sock.getsockname()[1])  # the real one, also when asked for port 0
    state = Runtime(env=dict(os.environ), transport="http")
    try:
        app = app_for(state, Options(host, port, sign_in, oauth, public_url, stateless, json_logs), announce)
        # X-Forwarded-For is applied inside the app (lore.http.limits.RecordPeer), not by uvicorn.
        # JSON: uvicorn's lines through lore's handler, and lore.access instead of its access log (a
        # Config configures logging as it is made: make one only).
        quiet: dict[str, Any] = {"log_config": None, "access_log": False} if json_logs else {}
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, proxy_headers=False, **quiet)
        server = uvicorn.Server(config)
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt:  # Ctrl-C: a normal stop
            return 0
        return 0 if server.started else 1
    finally:
        state.close()
        metrics.process_exited(os.getpid())


def app_for(state: Runtime, options: Options, announce: Callable[[str], None] | None = None) -> Starlette:
    """`lore serve`'s app over `state`, once its socket listens: the MCP server (lore.mcp) with the
    sign-in of the mode, inside the HTTP app (lore.http: /api, the web UI, health), then the ready
    lines logged (the serving line and how to reach the web UI). Also what the tests serve in their
    own process."""
    from lore.http.app import auth_for, build
    from lore.mcp.server import create_server

    try:
        auth = auth_for(state, options)
        server = create_server(
            state,
            token_verifier=auth.token_verifier,
            auth=auth.auth,
            auth_server_provider=auth.auth_server_provider,
        )
        app = build(state, options, server, auth)
    except ValueError as exc:  # the SDK's checks of the issuer URL (https unless loopback)
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise Refused(
            f"Cannot serve OAuth at {options.base_url}: {first}",
            "Give --public-url as the https:// address clients use (plain http only on 127.0.0.1).",
        ) from None
    if announce is not None:
        announce(options.base_url)
    mode = "sign-in" if options.sign_in else "local, no sign-in"
    if not options.sign_in:
        from lore.cli.gateway import local_note

        note = local_note("serve")
        if note:
            logging.getLogger("lore").warning("%s", note)
    # The ready line: the socket listens already, so a client that reads it can connect.
    logging.getLogger("lore").info("serving %s/mcp (%s)", options.base_url, mode)
    link = getattr(app.state, "sign_in_link", None)
    if link:  # local mode: only whoever sees this terminal can open the UI (or has a token)
        logging.getLogger("lore").info("web UI: open %s to sign in (works once)", link)
    else:
        logging.getLogger("lore").info(
            "web UI: %s/ (sign in with a token from `lore token create USER`)", options.base_url
        )
    return app


def quickstart(port: int | None = None) -> int:
    """`make run`: a config if none, the embedded database up and migrated, then HTTP MCP."""
    port = port_of(port, os.environ)
    # The port first: a taken one is said before the database is started for nothing.
    sock = listen("127.0.0.1", port, "use `lore run --port {port}` (or LORE_PORT={port})")
    try:
        from lore.core.config import config_path
        from lore.service import database

        path = config_path(os.environ)
        if not path.exists():
            from lore.cli.setup import write_starter

            write_starter(path)
        from lore.core.config import load_config

        config = load_config()
        # the user asked: after `lore db stop` too
        target = database.ready(os.environ, config.database_url, release=True)
    except BaseException:
        sock.close()
        raise

    served: list[str] = []

    def banner(base_url: str) -> None:
        from lore.core import local_secret

        served.append(base_url)
        local_secret.read_or_create(os.environ)  # made now: `lore token local` prints it
        print(f"lore is up: {target.describe()}; config {path}")
        print(
            "Connect Claude Code: `lore install claude-code` (memory before the first prompt too, over "
            "stdio; no secret to copy)."
        )
        # Never the secret itself on a command line: argv is visible to every local user, and the line
        # would stay in the shell's history. Claude Code expands ${LORE_TOKEN} from its environment.
        print(
            "Or the tools only, over HTTP (your local secret from the environment, never on a command line):"
        )
        print(
            '  export LORE_TOKEN="$(lore token local)"   # in your shell profile, before Claude Code starts'
        )
        print(
            f'  claude mcp add --transport http lore {base_url}/mcp --header "X-Lore-Workspace: $PWD" '
            "--header 'Authorization: Bearer ${LORE_TOKEN}'"
        )
        print("Ctrl-C stops serving (the database keeps running; `lore db stop` stops it).", flush=True)

    code = http("127.0.0.1", port, sock=sock, announce=banner)
    if served:  # Ctrl-C (or a stop): what stopped, and what goes on without it
        print(stopped(served[0], target.embedded, target.describe()), flush=True)
    return code


def stopped(base_url: str, embedded: bool, database: str) -> str:
    """What `lore run` says when it stops serving: that is all that stopped."""
    keeps = (
        f"{database} keeps running for your agents' own lore (stdio sessions, hooks); "
        "`lore db stop` stops it."
        if embedded
        else f"{database} is not lore's to stop; your agents' own lore (stdio sessions, hooks) still uses it."
    )
    return f"lore stopped serving {base_url} (MCP over HTTP, /api, the web UI). The {keeps}"


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
