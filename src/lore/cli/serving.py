"""`lore mcp` (stdio), `lore serve` (streamable HTTP) and `lore run` (the quick start)."""

from __future__ import annotations

import ipaddress
import logging
import os
import sys

from lore.errors import Refused


def _logging(level: str = "warning") -> None:
    # stdout belongs to the MCP protocol on stdio: log to stderr, never the environment.
    logging.basicConfig(stream=sys.stderr, level=level.upper(), format="lore: %(message)s")
    logging.getLogger("lore").setLevel(logging.INFO)


def stdio(workspace: str | None) -> int:
    _logging()
    from lore.mcp.server import AppState, create_server

    state = AppState(env=dict(os.environ), transport="stdio", workspace_arg=workspace)
    server = create_server(state)
    try:
        server.run("stdio")
    finally:
        state.close()
    return 0


def http(
    host: str,
    port: int,
    *,
    sign_in: bool = False,
    oauth: bool = False,
    public_url: str | None = None,
    stateless: bool = False,
    log_level: str = "warning",
) -> int:
    """`lore serve`. Without sign-in: loopback only, one user, the local config file. With
    `--sign-in`: every request needs a bearer token; each user has their own spaces."""
    sign_in = sign_in or oauth
    if not sign_in and not _loopback(host):
        raise Refused(
            f"Refusing to serve on {host}: without sign-in lore binds loopback only "
            "(anyone who reached it could read and write memory).",
            "Use --host 127.0.0.1 (the default), or add --sign-in (every request then needs a token "
            "from `lore token create USER`).",
        )
    _logging(log_level)
    import uvicorn

    from lore.http.app import Options, build
    from lore.mcp.server import AppState

    state = AppState(env=dict(os.environ), transport="http")
    options = Options(host, port, sign_in, oauth, public_url, stateless)
    try:
        app = build(state, options)
    except ValueError as exc:  # the SDK's checks of the issuer URL (https unless loopback)
        first = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise Refused(
            f"Cannot serve OAuth at {options.base_url}: {first}",
            "Give --public-url as the https:// address clients use (plain http only on 127.0.0.1).",
        ) from None
    mode = "sign-in" if sign_in else "local, no sign-in"
    logging.getLogger("lore").info("serving %s/mcp (%s)", options.base_url, mode)
    link = getattr(app.state, "sign_in_link", None)
    if link:  # local mode: only whoever sees this terminal can open the UI (or has a token)
        logging.getLogger("lore").info("web UI: open %s to sign in (works once)", link)
    else:
        logging.getLogger("lore").info(
            "web UI: %s/ (sign in with a token from `lore token create USER`)", options.base_url
        )
    try:
        uvicorn.run(app, host=host, port=port, log_level=log_level)
    finally:
        state.close()
    return 0


def quickstart() -> int:
    """`make run`: a config if none, the embedded database up and migrated, then HTTP MCP."""
    from lore.config import config_path
    from lore.db import connect, migrate

    path = config_path(os.environ)
    if not path.exists():
        from lore.cli.setup import write_starter

        write_starter(path)
    from lore.config import load_config

    config = load_config()
    target = connect.target(config.database_url)
    with connect.connect(target.url) as conn:
        migrate.upgrade(conn)
    port = int(os.environ.get("LORE_PORT", "8765"))
    url = f"http://127.0.0.1:{port}/mcp"
    print(f"lore is up: {target.describe()}; config {path}")
    print("Connect Claude Code (run in your project):")
    print(f'  claude mcp add --transport http lore {url} --header "X-Lore-Workspace: $PWD"')
    print("Ctrl-C stops serving (the database keeps running; `lore db stop` stops it).", flush=True)
    return http("127.0.0.1", port)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
