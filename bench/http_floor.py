"""The floors under `lore serve`'s cost per call (bench/http_load.py measures lore itself): the same
MCP SDK serving a tool that does nothing, over the same streamable HTTP transport and the same
client load (N sessions calling back to back), and a plain ASGI endpoint (Starlette, no MCP) running
the SQL of `recall_facts` on a psycopg pool. Each server is its own process on 127.0.0.1; its CPU
is read from /proc, so CPU per call excludes the client.

Rerun:  .venv/bin/python bench/http_floor.py [--seconds 30] [--sessions 50] [--write]
(--write replaces the "HTTP floors" section of docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from procs import cpu_seconds, rss_mb
from report import commit, machine, replace_section
from scratch import root_base

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.lorehttp import stop_process

from lore.db import embedded, migrate

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "## HTTP floors"

NOOP_SERVER = """
import sys, uvicorn
from mcp.server.mcpserver import MCPServer
server = MCPServer("floor")

@server.tool(description="does nothing")
async def noop() -> str:
    return "ok"

app = server.streamable_http_app(host="127.0.0.1")
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""

SQL_SERVER = """
import sys, uvicorn
from psycopg_pool import AsyncConnectionPool
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

url, port = sys.argv[1], int(sys.argv[2])
pool = AsyncConnectionPool(url, min_size=4, max_size=4, open=False)
QUERY = "SELECT lineage, statement FROM lore_facts_ordered(ARRAY['work'], 'work', 200)"
COUNT = "SELECT count(*) FROM lore_facts_visible(ARRAY['work'])"

async def recall(request):
    await request.body()
    async with pool.connection() as conn:
        rows = await (await conn.execute(QUERY)).fetchall()
        total = (await (await conn.execute(COUNT)).fetchone())[0]
    return JSONResponse({"facts": [{"id": f"f_{r[0]}", "statement": r[1]} for r in rows], "total": total})

async def lifespan(app):
    await pool.open()
    yield
    await pool.close()

app = Starlette(routes=[Route("/recall", recall, methods=["POST"])], lifespan=lifespan)
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
"""


def wait_up(url: str, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if proc.poll() is not None:
            raise SystemExit(f"server exited {proc.returncode}")
        try:
            httpx2.get(url, timeout=1)
            return
        except httpx2.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not come up")


def mcp_load(tool: str, arguments: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
    """N MCP sessions calling `tool` back to back (the SDK's own client, as in http_load.py)."""

    async def load(url: str, sessions: int, seconds: float) -> list[float]:
        return await _mcp_load(url, sessions, seconds, tool, arguments, headers or {})

    return load


async def _mcp_load(
    url: str, sessions: int, seconds: float, tool: str, arguments: dict[str, Any], headers: dict[str, str]
) -> list[float]:
    took: list[float] = []
    deadline = time.monotonic() + seconds

    async def one() -> None:
        async with (
            httpx2.AsyncClient(timeout=60, headers=headers) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            while time.monotonic() < deadline:
                started = time.perf_counter()
                result = await session.call_tool(tool, arguments)
                if result.is_error:
                    raise SystemExit(f"{tool} failed: {result.content}")
                took.append((time.perf_counter() - started) * 1000)

    async with anyio.create_task_group() as group:
        for _ in range(sessions):
            group.start_soon(one)
    return took


async def plain_load(url: str, sessions: int, seconds: float) -> list[float]:
    took: list[float] = []
    deadline = time.monotonic() + seconds
    async with httpx2.AsyncClient(timeout=60) as http:

        async def one() -> None:
            while time.monotonic() < deadline:
                started = time.perf_counter()
                answer = await http.post(f"{url}/recall", json={"workspace": "/w"})
                answer.raise_for_status()
                took.append((time.perf_counter() - started) * 1000)

        async with anyio.create_task_group() as group:
            for _ in range(sessions):
                group.start_soon(one)
    return took


def measure(
    cmd: list[str],
    url: str,
    load: Any,
    sessions: int,
    seconds: float,
    env: dict[str, str] | None = None,
    profile: Path | None = None,
) -> dict[str, float]:
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    spy: subprocess.Popen[bytes] | None = None
    try:
        wait_up(url, proc)
        if profile is not None:  # py-spy samples every thread of the server while the load runs
            spy = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "py-spy"),
                    "record",
                    "--pid",
                    str(proc.pid),
                    "--format",
                    "raw",
                    "--threads",
                    "--nonblocking",
                    "-d",
                    str(int(seconds)),
                    "-o",
                    str(profile),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        before = cpu_seconds(proc.pid)
        started = time.monotonic()
        took = anyio.run(load, url, sessions, seconds)
        elapsed = time.monotonic() - started
        cpu = cpu_seconds(proc.pid) - before
        rss = rss_mb(proc.pid)
    finally:
        if spy is not None:
            spy.wait(timeout=seconds + 60)
        stop_process(proc, timeout=30)
    return {
        "calls": len(took),
        "rate": len(took) / elapsed,
        "cpu_ms": cpu / max(1, len(took)) * 1000,
        "p50": statistics.median(took),
        "p95": statistics.quantiles(took, n=20, method="inclusive")[18],
        "rss": rss,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--stateless", action="store_true", help="lore serve --stateless (JSON answers)")
    ap.add_argument("--profile", type=Path, help="py-spy's raw samples of lore serve to this file")
    ap.add_argument("--only-lore", action="store_true", help="measure lore serve alone (with --profile)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-floor-", dir="/tmp"))
    env = {"LORE_DATA_DIR": str(tmp / "data"), "LORE_ROOT_BASE": root_base()}  # as root: see scratch.py
    python = sys.executable
    try:
        db = embedded.start(env)
        import psycopg

        with psycopg.connect(db) as conn:
            migrate.upgrade(conn)
            conn.execute(
                "INSERT INTO facts (lineage, space, statement, source) SELECT nextval('fact_lineage_seq'), "
                "'work', 'fact ' || g || ' about the deploy', 'bench' FROM generate_series(1, 200) g"
            )
        results = {}
        port = 18761
        (tmp / "noop.py").write_text(NOOP_SERVER)
        (tmp / "sql.py").write_text(SQL_SERVER)
        print("SDK no-op tool ...", file=sys.stderr)
        results["sdk"] = (
            {}
            if args.only_lore
            else measure(
                [python, str(tmp / "noop.py"), str(port)],
                f"http://127.0.0.1:{port}",
                mcp_load("noop", {}),
                args.sessions,
                args.seconds,
            )
        )
        print("lore serve, recall_facts ...", file=sys.stderr)
        project = tmp / "work"
        project.mkdir()
        (tmp / "config.toml").write_text(f'[[space]]\nid = "work"\npaths = ["{project}"]\n')
        lore_env = {**os.environ, **env, "LORE_CONFIG": str(tmp / "config.toml"), "LORE_EMBEDDER": "none"}
        serve = [str(Path(python).parent / "lore"), "serve", "--port", str(port + 2)]
        results["lore"] = measure(
            serve + (["--stateless"] if args.stateless else []),
            f"http://127.0.0.1:{port + 2}",
            mcp_load("recall_facts", {}, {"X-Lore-Workspace": str(project)}),
            args.sessions,
            args.seconds,
            lore_env,
            args.profile,
        )
        if args.only_lore:
            print(results["lore"])
            return 0
        print("plain ASGI + SQL ...", file=sys.stderr)
        results["sql"] = measure(
            [python, str(tmp / "sql.py"), db, str(port + 1)],
            f"http://127.0.0.1:{port + 1}",
            plain_load,
            args.sessions,
            args.seconds,
        )
        rows = "\n".join(
            f"| {name} | {r['calls']:,} | {r['rate']:.0f} | {r['cpu_ms']:.2f} | "
            f"{r['p50']:.1f} | {r['p95']:.1f} | {r['rss']:.0f} |"
            for name, r in (
                ("SDK, no-op tool (MCP over streamable HTTP)", results["sdk"]),
                ("plain ASGI endpoint, recall_facts' SQL", results["sql"]),
                (f"`lore serve`{' --stateless' if args.stateless else ''}, recall_facts", results["lore"]),
            )
        )
        ratio = results["lore"]["cpu_ms"] / results["sdk"]["cpu_ms"]
        section = f"""{SECTION}

What a call costs without lore: {args.sessions} clients calling back to back for {args.seconds:g} s
against (1) the MCP SDK serving one tool that returns "ok", over streamable HTTP with the SDK's own
client, as `lore serve` is driven in bench/http_load.py, and (2) a Starlette endpoint that runs the
SQL of `recall_facts` (the first 200 facts in render order and the count) on a 4-connection pool,
over plain HTTP. Server CPU per call is read from /proc (the client is not counted).

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}

| server | calls | calls/s | server CPU per call, ms | p50 ms | p95 ms | RSS MB |
|---|---:|---:|---:|---:|---:|---:|
{rows}

lore's CPU per call is {ratio:.2f}x the SDK no-op floor's (goal: at most 1.5x).

Rerun: `.venv/bin/python bench/http_floor.py --seconds {args.seconds:g} --write`
"""
        print(section)
        if args.write:
            replace_section(DOC, SECTION, section)
        return 0
    finally:
        embedded.stop(env)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
