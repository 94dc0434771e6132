"""`lore mcp` from spawn to answering tools/list, and its resident memory once initialized, beside
the floor: the same MCP SDK serving one no-op tool over stdio, measured the same way in the same run
(alternating, so that a busy moment hits both). The client is raw JSON-RPC over the pipes (no SDK
client in the measuring process): initialize, the initialized notification, tools/list.

Rerun:  .venv/bin/python bench/mcp_startup.py [--runs 15] [--write]
(--write replaces the "lore mcp start-up" section of docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from procs import rss_mb
from report import commit, machine, replace_section
from scratch import root_base

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.jsonrpc import INITIALIZED, initialize

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "## lore mcp start-up"
BIN = Path(sys.executable).parent
FLOOR = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("floor")


@server.tool(description="does nothing")
async def noop() -> str:
    return "ok"


server.run()
"""


def one(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(seconds from spawn to the tools/list answer, RSS in MB one second after it)."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer() -> dict[str, object]:
        assert proc.stdout is not None
        while True:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit(f"{cmd[0]} exited before answering")
            message = json.loads(line)
            if "id" in message:
                return dict(message)

    try:
        send(initialize("bench"))
        answer()
        send(INITIALIZED)
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = answer()
        took = time.perf_counter() - started
        assert "result" in listed, listed
        time.sleep(1.0)
        return took, rss_mb(proc.pid)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-startup-", dir="/tmp"))
    try:
        (tmp / "floor.py").write_text(FLOOR)
        project = tmp / "acme"
        project.mkdir()
        (tmp / "config.toml").write_text(f'[[space]]\nid = "acme"\npaths = ["{project}"]\n')
        env = {
            **os.environ,
            "LORE_CONFIG": str(tmp / "config.toml"),
            "LORE_DATA_DIR": str(tmp / "data"),
            "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
        }
        commands = {
            "SDK, one no-op tool (the floor)": [sys.executable, str(tmp / "floor.py")],
            "`lore mcp` (12 tools)": [str(BIN / "lore"), "mcp", "--workspace", str(project)],
        }
        one(commands["`lore mcp` (12 tools)"], env)  # the first start makes the embedded database
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                results[name].append(one(cmd, env))
        rows = []
        for name, runs in results.items():
            times = sorted(t for t, _ in runs)
            p90 = times[int(len(times) * 0.9) - 1] * 1000
            rss = statistics.median(r for _, r in runs)
            rows.append(
                f"| {name} | {len(runs)} | {statistics.median(times) * 1000:.0f} | {p90:.0f} | {rss:.0f} |"
            )
        floor = statistics.median(t for t, _ in results["SDK, one no-op tool (the floor)"])
        lore = statistics.median(t for t, _ in results["`lore mcp` (12 tools)"])
        section = f"""{SECTION}

From spawn to the answer to tools/list (initialize, the initialized notification, tools/list, raw
JSON-RPC over the pipes), and the resident memory one second later, {args.runs} runs of each,
alternating. `lore mcp` runs with a config and an embedded database already made (what every start
after the first one is).

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}

| server | runs | p50 ms | p90 ms | RSS MB after initialize |
|---|---:|---:|---:|---:|
{chr(10).join(rows)}

`lore mcp` takes {lore / floor:.2f}x the floor. Most of both is importing the SDK (`import mcp` loads its
client and server packages and every protocol version's types: about 0.45 s here, `-X importtime`);
lore's own imports on top are its core, psycopg and psycopg_pool (about 0.1 s), and nothing of the
embedder, the web UI or the HTTP server (tests/unit/test_mcp_imports.py). The 0.5 s goal is below
the SDK's own floor on this machine.

Rerun: `.venv/bin/python bench/mcp_startup.py --write`
"""
        print(section)
        if args.write:
            replace_section(DOC, SECTION, section)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
