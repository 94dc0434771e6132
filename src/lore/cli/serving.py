"""`lore mcp` (stdio), `lore serve` (streamable HTTP) and `lore run` (the quick start)."""

from __future__ import annotations

import ipaddress
import logging
import os
import sys

from lore.errors import Refused


def _logging() -> None:
    # stdout belongs to the MCP protocol on stdio: log to stderr, never the environment.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="lore: %(message)s")
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


def http(host: str, port: int) -> int:
    if not _loopback(host):
        raise Refused(
            f"Refusing to serve on {host}: sign-in is not available yet, so lore binds loopback only.",
            "Use --host 127.0.0.1 (the default).",
        )
    _logging()
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    from lore.mcp.server import AppState, create_server

    state = AppState(env=dict(os.environ), transport="http")
    server = create_server(state)

    @server.custom_route("/healthz", methods=["GET"])  # type: ignore[untyped-decorator]
    async def healthz(_: Request) -> Response:
        return JSONResponse({"ok": True})

    app = server.streamable_http_app(host=host)
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
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
