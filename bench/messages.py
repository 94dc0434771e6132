"""Message delivery latency: from the sender's COMMIT to the receiver holding the message
(docs/design.md, Tasks and messages; Budgets).

Two figures, on a private embedded PostgreSQL (a temporary LORE_DATA_DIR under /tmp, stopped and
removed on exit, Ctrl-C included):

  listener  A sender *process* inserts a message and commits; the clock starts just before the
            INSERT (its COMMIT follows at once).
            The receiver (this process) waits on lore's dedicated LISTEN connection (lore.listen),
            wakes on the NOTIFY of `lore_messages_v1` and fetches the row (lore.messages.since); the
            clock stops when it holds the row. Both read CLOCK_MONOTONIC (system-wide on Linux).
  mcp       What a waiting agent sees: a real `lore mcp` session calls send_message(wait_seconds=10)
            to another space; this process answers with reply_to, the clock starting just before
            the answer's COMMIT and stopping when the MCP client has the tool result with the reply.

No polling anywhere: the receiver blocks on the socket until the server pushes.

Rerun:  .venv/bin/python bench/messages.py [--messages 200] [--round-trips 30] [--write]
(--write replaces the "Message delivery" section of docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import psycopg
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation
from report import commit, machine, replace_section
from scratch import root_base

from lore.db import embedded, migrate
from lore.store import messages
from lore.store.listen import CHANNEL_MESSAGES, Listener

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.prefix) / "bin"
DOC = REPO / "docs" / "benchmarks.md"
SECTION = "## Message delivery"
TARGET_P50_MS = 50.0

SENDER = """
import json, random, sys, time
import psycopg
url, count = sys.argv[1], int(sys.argv[2])
with psycopg.connect(url) as conn:
    for i in range(count):
        time.sleep(random.uniform(0.02, 0.05))  # spaced out: one message in flight at a time
        t0 = time.monotonic()  # the clock starts before the INSERT; its COMMIT follows at once
        conn.execute(
            "INSERT INTO messages (to_space, from_space, body, source) VALUES ('alpha', 'beta', %s, 'bench')",
            (json.dumps({"i": i, "t0": t0}),))
        conn.commit()
"""


async def listener_latencies(url: str, count: int) -> list[float]:
    """Milliseconds from the sender's COMMIT to this process holding the row, per message."""
    out: list[float] = []
    async with Listener(url, [CHANNEL_MESSAGES]) as listener:
        after = await listener.call(messages.latest)
        sender = await asyncio.create_subprocess_exec(str(BIN / "python"), "-c", SENDER, url, str(count))
        try:
            while len(out) < count:
                events = await listener.wait(30)
                if not events:
                    raise SystemExit("no notification within 30 s")
                fresh = await listener.call(partial(messages.since, space="alpha", after=after))
                now = time.monotonic()
                for message in fresh:
                    out.append((now - json.loads(message.body)["t0"]) * 1000)
                    after = max(after, message.num)
        finally:
            if await sender.wait() != 0:
                raise SystemExit("the sender process failed")
    return out


async def mcp_latencies(url: str, env: dict[str, str], workdir: Path, count: int) -> list[float]:
    """Milliseconds from the answer's COMMIT to the waiting MCP client holding the tool result."""
    out: list[float] = []
    params = StdioServerParameters(command=str(BIN / "lore"), args=["mcp"], env=env, cwd=str(workdir))
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=Implementation(name="bench", version="1")) as session,
        Listener(url, [CHANNEL_MESSAGES]) as answerer,
    ):
        await session.initialize()
        for i in range(count + 2):  # two warm-up round trips
            started: dict[str, float] = {}

            async def answer(started: dict[str, float]) -> None:
                while True:  # the question arrives on the answerer's LISTEN connection
                    for event in await answerer.wait(15):
                        if event.payload.get("to_space") == "gamma":
                            num = int(event.payload["id"])
                            with psycopg.connect(url) as conn:
                                conn.execute(
                                    "INSERT INTO messages (to_space, from_space, body, reply_to, source) "
                                    "VALUES ('alpha', 'gamma', 'answer', %s, 'bench')",
                                    (num,),
                                )
                                started["t0"] = time.monotonic()
                                conn.commit()
                            return

            task = asyncio.create_task(answer(started))
            result = await session.call_tool(
                "send_message", {"to": "gamma", "body": f"question {i}", "wait_seconds": 10}
            )
            done = time.monotonic()
            await task
            reply = (result.structured_content or {}).get("reply")
            if result.is_error or not reply:
                raise SystemExit(f"send_message did not return the reply: {result.content}")
            if i >= 2:
                out.append((done - started["t0"]) * 1000)
    return out


def stats(ms: list[float]) -> dict[str, float]:
    return {
        "p50": statistics.median(ms),
        "p95": statistics.quantiles(ms, n=20, method="inclusive")[18],
        "min": min(ms),
        "max": max(ms),
        "n": len(ms),
    }


def report(args: argparse.Namespace, results: dict[str, dict[str, float]]) -> str:
    labels = {
        "listener": "COMMIT → lore.listen receiver holds the row",
        "mcp": "answer COMMIT → waiting `send_message` returns it (MCP stdio)",
    }
    rows = "| path | runs | p50 ms | p95 ms | min ms | max ms |\n|---|---:|---:|---:|---:|---:|\n"
    rows += "\n".join(
        f"| {labels[k]} | {s['n']:.0f} | {s['p50']:.1f} | {s['p95']:.1f} | {s['min']:.1f} | {s['max']:.1f} |"
        for k, s in results.items()
    )
    verdict = {True: "**PASS**", False: "**FAIL**"}
    p50, mcp50 = results["listener"]["p50"], results["mcp"]["p50"]
    measured = f"{p50:.1f} ms (through MCP: {mcp50:.1f} ms)"
    passed = verdict[p50 < TARGET_P50_MS and mcp50 < TARGET_P50_MS]
    rerun = f"--messages {args.messages} --round-trips {args.round_trips} --write"
    return f"""{SECTION}

How long a message takes from the sender's COMMIT to the receiver holding it, through PostgreSQL
LISTEN/NOTIFY (a trigger notifies `lore_messages_v1`; the receiver blocks on lore's dedicated listening
connection, wakes, and fetches the row: no polling). Sender and receiver are separate processes on one
warm embedded PostgreSQL (unix socket); both read CLOCK_MONOTONIC. The clock starts just before the
INSERT, whose COMMIT follows at once.
The MCP row is what a waiting agent sees: `send_message(wait_seconds=10)` in a real `lore mcp`
session, answered with `reply_to` by another process.

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}
- Parameters: {args.messages} messages one at a time (20-50 ms apart); {args.round_trips} MCP round trips
  (after 2 warm-up ones)

{rows}

| target (docs/design.md, Budgets) | measured | result |
|---|---|---|
| message commit to delivery p50 < {TARGET_P50_MS:.0f} ms | {measured} | {passed} |

Rerun: `.venv/bin/python bench/messages.py {rerun}`
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=200, help="messages for the listener figure (≤ 2000)")
    ap.add_argument("--round-trips", type=int, default=30, help="MCP question/answer round trips (≤ 200)")
    ap.add_argument("--write", action="store_true", help=f"update '{SECTION}' in docs/benchmarks.md")
    args = ap.parse_args()
    args.messages, args.round_trips = min(args.messages, 2000), min(args.round_trips, 200)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM cleans up like Ctrl-C
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-msg-", dir="/tmp"))
    dirs = {name: tmp / "work" / name for name in ("alpha", "gamma")}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "LORE_DATA_DIR": str(tmp / "data"),
        "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
        "LORE_CONFIG": str(tmp / "config.toml"),
        "LORE_EMBEDDER": "broken",
    }
    try:
        for d in dirs.values():
            d.mkdir(parents=True)
        Path(env["LORE_CONFIG"]).write_text(
            f'[[space]]\nid = "alpha"\npaths = ["{dirs["alpha"]}"]\naccepts_from = ["beta", "gamma"]\n'
            f'[[space]]\nid = "beta"\n[[space]]\nid = "gamma"\npaths = ["{dirs["gamma"]}"]\n'
            'accepts_from = ["alpha"]\n'
        )
        print(f"starting embedded PostgreSQL in {tmp} ...", file=sys.stderr)
        url = embedded.start(env)
        with psycopg.connect(url) as conn:
            migrate.upgrade(conn)
        random.seed(7)
        results: dict[str, Any] = {}
        print(f"listener: {args.messages} messages ...", file=sys.stderr)
        results["listener"] = stats(asyncio.run(listener_latencies(url, args.messages)))
        print(f"mcp: {args.round_trips} round trips ...", file=sys.stderr)
        results["mcp"] = stats(asyncio.run(mcp_latencies(url, env, dirs["alpha"], args.round_trips)))
        section = report(args, results)
        print(section)
        if args.write:
            replace_section(DOC, SECTION, section)
            print(f"updated {DOC}", file=sys.stderr)
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not skip the cleanup
        try:
            embedded.stop(env)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            signal.signal(signal.SIGINT, signal.default_int_handler)


if __name__ == "__main__":
    sys.exit(main())
