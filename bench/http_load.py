"""HTTP load: 50 concurrent MCP sessions against one `lore serve --sign-in` on 127.0.0.1
(docs/design.md, Serving).

Ten users (each with a pushed config and a bearer token) open five sessions each through the SDK's
streamable HTTP client; every session runs a mix of remember_fact, remember_note, search_notes and
recall_facts back to back for the given time. Reported: per-tool p50/p95/p99, throughput, errors
(the target is zero), and the most PostgreSQL connections the server held at once
(pg_stat_activity, sampled every 0.25 s): the pool must stay bounded whatever the concurrency.
Client and server share this machine's cores. Everything lives in a temporary LORE_DATA_DIR
under /tmp, stopped and removed on exit (Ctrl-C included).

Rerun:  .venv/bin/python bench/http_load.py [--seconds 60] [--sessions 50] [--users 10] [--write]
(--write replaces the "HTTP load" section of docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_types import Implementation, TextContent
from procs import cpu_seconds, rss_mb, tree_cpu_seconds
from report import commit, machine, replace_section

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from scratch import root_base
from support.jsonrpc import MCP_HEADERS, initialize
from support.lorehttp import stop_process

from lore.db import embedded, migrate
from lore.store import auth, userconfig

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.prefix) / "bin"
DOC = REPO / "docs" / "benchmarks.md"
SECTION = "## HTTP load"
# Every HTTP answer of 400 or more the sessions got (the SDK's client reports them as -32603 only).
STATUSES: collections.Counter[str] = collections.Counter()
MIX = [("remember_fact", 20), ("remember_note", 15), ("search_notes", 35), ("recall_facts", 30)]
WORDS = [
    "deploy",
    "release",
    "billing",
    "auth",
    "ingest",
    "search",
    "exporter",
    "scheduler",
    "webhook",
    "report",
    "cache",
    "queue",
    "retry",
    "timeout",
    "migration",
    "index",
    "vacuum",
    "replica",
    "backup",
    "token",
    "session",
    "config",
    "docker",
    "helm",
    "terraform",
    "pytest",
    "coverage",
    "lint",
    "format",
    "typing",
    "latency",
    "throughput",
    "budget",
    "incident",
    "rollback",
    "canary",
]


def sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepare(url: str, users: int, base: Path, notes: int) -> dict[str, str]:
    """Users, tokens, configs and some notes to search; returns {user: token}."""
    rng = random.Random(7)
    tokens = {}
    with psycopg.connect(url) as conn:
        migrate.upgrade(conn)
        for i in range(users):
            user = f"user{i:02d}"
            (base / user / "work").mkdir(parents=True, exist_ok=True)
            _, tokens[user] = auth.create(conn, user, label="bench")
            toml = f'default_space = "work"\n[[space]]\nid = "work"\npaths = ["{base / user / "work"}"]\n'
            userconfig.push(conn, user, toml, str(base / user))
            for _ in range(notes):
                conn.execute(
                    "INSERT INTO notes (lineage, space, kind, title, body, source) "
                    "VALUES (nextval('note_lineage_seq'), %s, 'note', %s, %s, 'bench')",
                    (f"{user}/work", sentence(rng, 4), sentence(rng, 40)),
                )
        conn.commit()
    return tokens


def warm_up(url: str, patience: float = 10.0) -> None:
    """Let the server's background worker embed the seeded notes first (steady state, not a backlog).
    Stops waiting once nothing has changed for `patience` seconds (e.g. `LORE_EMBEDDER=none`)."""
    last, since = -1, time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            row = conn.execute("SELECT count(*) FROM notes WHERE embedding IS NULL").fetchone()
            pending = int(row[0]) if row else 0
            if pending == 0 or time.monotonic() - since > patience:
                return
            if pending != last:
                print(f"waiting for {pending} notes to be embedded ...", file=sys.stderr)
                last, since = pending, time.monotonic()
            time.sleep(1)


async def session_loop(
    url: str,
    secret: str,
    workspace: Path,
    deadline: float,
    seed: int,
    out: dict[str, list[float]],
    errors: list[str],
    pace: float = 0.0,
) -> None:
    """Calls back to back until `deadline`; with `pace`, each call starts at least `pace` seconds
    after the last one started."""
    rng = random.Random(seed)
    tools, weights = zip(*MIX, strict=True)
    headers = {"Authorization": f"Bearer {secret}", "X-Lore-Workspace": str(workspace)}

    async def note_status(response: httpx2.Response) -> None:
        # (the SDK's client reports these as -32603 only; a stateless server's 405 to the SDK's GET
        # stream is no error: nothing is pushed without a session)
        if response.status_code >= 400 and (response.status_code, response.request.method) != (405, "GET"):
            body = (await response.aread())[:160].decode("utf-8", "replace")
            STATUSES[f"HTTP {response.status_code} {response.request.method}: {body}"] += 1

    async with (
        httpx2.AsyncClient(headers=headers, timeout=60, event_hooks={"response": [note_status]}) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, client_info=Implementation(name="bench", version="1")) as session,
    ):
        await session.initialize()
        started = 0.0
        while time.monotonic() < deadline:
            tool = rng.choices(tools, weights)[0]
            make_args: dict[str, Callable[[], dict[str, Any]]] = {
                "remember_fact": lambda: {"statement": sentence(rng)},
                "remember_note": lambda: {"body": sentence(rng, 60), "title": sentence(rng, 3)},
                "search_notes": lambda: {"query": " ".join(rng.sample(WORDS, 3))},
                "recall_facts": lambda: {},
            }
            args = make_args[tool]()
            if pace:
                await anyio.sleep(max(0.0, started + pace - time.perf_counter()))
            started = time.perf_counter()
            try:
                result = await session.call_tool(tool, args)
            except Exception as exc:  # counted, reported; the target is none
                detail = getattr(exc, "error", None)  # an MCPError carries the server's code and message
                errors.append(f"{tool}: {type(exc).__name__}: {exc} {detail or ''}"[:300])
                continue
            took = (time.perf_counter() - started) * 1000
            if result.is_error:
                body = " ".join(c.text for c in result.content if isinstance(c, TextContent))
                errors.append(f"{tool}: {body}"[:300])
            else:
                out[tool].append(took)


async def sample_connections(url: str, stop: anyio.Event, peak: dict[str, int]) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        while not stop.is_set():
            rows = await (
                await conn.execute(
                    "SELECT coalesce(nullif(application_name, ''), '(none)'), count(*) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                    "AND backend_type = 'client backend' GROUP BY 1"
                )
            ).fetchall()
            total = 0
            for name, count in rows:
                peak[name] = max(peak.get(name, 0), int(count))
                total += int(count)
            peak["(all but the sampler)"] = max(peak.get("(all but the sampler)", 0), total)
            with anyio.move_on_after(0.25):
                await stop.wait()


async def drive(
    args: argparse.Namespace,
    url: str | list[str],
    db_url: str,
    tokens: dict[str, str],
    base: Path,
    sessions_n: int,
    seconds: float,
    flooder: str | None = None,
) -> dict[str, Any]:
    out: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    peak: dict[str, int] = {}
    tally: dict[str, int] = {}
    users = [u for u in tokens if u != flooder]
    stop = anyio.Event()
    started = time.monotonic()
    deadline = started + seconds
    async with anyio.create_task_group() as outer:
        outer.start_soon(sample_connections, db_url, stop, peak)
        if flooder is not None:
            first = url if isinstance(url, str) else url[0]
            outer.start_soon(flood, first, tokens[flooder], base / flooder / "work", deadline, tally)
        # One session alone is paced under a user's request rate (LORE_USER_RATE, 50/s): back to back
        # it would go faster and be refused with 429 by design.
        pace = 1 / 40 if sessions_n == 1 else 0.0
        async with anyio.create_task_group() as sessions:
            for i in range(sessions_n):
                user = users[i % len(users)]
                sessions.start_soon(
                    session_loop,
                    url if isinstance(url, str) else url[i % len(url)],  # round robin over the servers
                    tokens[user],
                    base / user / "work",
                    deadline,
                    i,
                    out,
                    errors,
                    pace,
                )
        elapsed = time.monotonic() - started
        stop.set()
    return {"out": out, "errors": errors, "peak": peak, "elapsed": elapsed, "flood": tally}


INITIALIZE = initialize("flood")


async def flood(url: str, secret: str, workspace: Path, deadline: float, tally: dict[str, int]) -> None:
    """One user doing everything at once: opening sessions without end (kept open), holding as many
    calls waiting for a reply as it can, and sending requests as fast as four connections allow."""
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {secret}", "X-Lore-Workspace": str(workspace)}

    def count(key: str) -> None:
        tally[key] = tally.get(key, 0) + 1

    async def opener(http: httpx2.AsyncClient) -> None:
        while time.monotonic() < deadline:
            try:
                answer = await http.post(f"{url}/mcp", json=INITIALIZE, headers=headers)
                count(f"initialize {answer.status_code}")
            except httpx2.HTTPError as exc:
                count(f"initialize {type(exc).__name__}")

    async def waiter() -> None:
        auth_only = {k: v for k, v in headers.items() if k not in MCP_HEADERS}
        while time.monotonic() < deadline:  # a session the caps closed is opened again
            try:
                async with (
                    httpx2.AsyncClient(headers=auth_only, timeout=60) as http,
                    streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    async with anyio.create_task_group() as group:
                        for _ in range(25):
                            group.start_soon(hold, session)
            except Exception as exc:  # refused (429) or cut: what a flooder gets
                count(f"session {type(exc).__name__}")
                await anyio.sleep(0.5)

    async def hold(session: ClientSession) -> None:
        while time.monotonic() < deadline:
            left = max(1.0, min(25.0, deadline - time.monotonic()))
            try:
                result = await session.call_tool(
                    "send_message", {"to": "work", "body": "hold", "wait_seconds": left}
                )
            except Exception as exc:
                count(f"wait {type(exc).__name__}")
                await anyio.sleep(0.2)
                continue
            count("wait refused" if result.is_error else "wait held")
            if result.is_error:
                await anyio.sleep(0.2)

    async with httpx2.AsyncClient(timeout=30) as http, anyio.create_task_group() as group:
        for _ in range(4):
            group.start_soon(opener, http)
        for _ in range(2):
            group.start_soon(waiter)


def stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")

    return {
        "n": len(ms),
        "p50": statistics.median(ms) if ms else float("nan"),
        "p95": pct(0.95),
        "p99": pct(0.99),
    }


def report(args: argparse.Namespace, run: dict[str, Any], embedder: str, rss: float) -> str:
    out, peak, alone = run["out"], run["peak"], run["alone"]["out"]
    errors = len(run["errors"]) + len(run["alone"]["errors"])
    total = sum(len(v) for v in out.values())
    rate = total / run["elapsed"]
    rows = "| tool | calls | p50 ms | p95 ms | p99 ms | p50 ms, one session alone |\n"
    rows += "|---|---:|---:|---:|---:|---:|\n"
    lines = [(f"`{tool}`", out[tool], alone[tool]) for tool, _ in MIX]
    lines.append(("all", [x for v in out.values() for x in v], [x for v in alone.values() for x in v]))
    for name, ms, solo_ms in lines:
        s, a = stats(ms), stats(solo_ms)
        rows += (
            f"| {name} | {s['n']:,} | {s['p50']:.1f} | {s['p95']:.1f} | {s['p99']:.1f} | {a['p50']:.1f} |\n"
        )
    pool = peak.get("lore", 0)
    conns = ", ".join(f"{k}: {v}" for k, v in sorted(peak.items()))
    server_cpu, client_cpu = run["cpu"]
    cores = run["elapsed"] * (os.cpu_count() or 1)
    in_line = args.sessions / rate * 1000
    verdict = {True: "**PASS**", False: "**FAIL**"}
    return f"""{SECTION}

{args.sessions} MCP sessions at once over streamable HTTP against one `lore serve --sign-in` on
127.0.0.1 ({args.users} users, {args.sessions // args.users} sessions each, every request with a
bearer token checked against the database), each session calling a mix of `remember_fact` (20%),
`remember_note` (15%), `search_notes` (35%) and `recall_facts` (30%) back to back for
{args.seconds:g} s. Client (the SDK's HTTP client, one process) and server share the machine.
Each user starts with {args.notes} notes to search; embedder `{embedder}` (notes written during the
run are embedded in the background).

- Date: {datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
- Machine: {machine()}
- lore commit: {commit()}
- Server: one process, database pool `LORE_POOL_SIZE={args.pool}`; resident memory at the end {rss:.0f} MB

{rows}
Throughput: **{rate:.0f} tool calls/s** over {run["elapsed"]:.1f} s; errors: **{errors}**. CPU used
during the run: server {server_cpu:.1f} s, client {client_cpu:.1f} s (of {cores:.0f} core-seconds).

With {args.sessions} sessions calling back to back, a call's latency is mostly its wait in line: at
{rate:.0f} calls/s, {args.sessions} calls in flight take about {in_line:.0f} ms each (Little's
law). The last column is the same mix from one session alone ({args.baseline_seconds:g} s, first,
at most 40 calls/s: under a user's request rate, `LORE_USER_RATE`).

Most PostgreSQL connections held at once (pg_stat_activity by application name): {conns}.

| target | measured | result |
|---|---|---|
| zero errors | {errors} | {verdict[errors == 0]} |
| pool bounded (`lore` connections ≤ LORE_POOL_SIZE) | {pool} ≤ {args.pool} | {verdict[pool <= args.pool]} |

Rerun: `.venv/bin/python bench/http_load.py --seconds {args.seconds:g} --write`
"""


def flood_report(quiet: dict[str, Any], flooded: dict[str, Any]) -> str:
    """The same load with one user flooding: the others' p95 and errors against the quiet run."""
    rows = "| tool | p95 ms, quiet | p95 ms, one user flooding | ratio |\n|---|---:|---:|---:|\n"
    worst = 0.0
    for tool, _ in MIX:
        a, b = stats(quiet["out"][tool]), stats(flooded["out"][tool])
        ratio = b["p95"] / a["p95"] if a["p95"] else float("inf")
        worst = max(worst, ratio)
        rows += f"| `{tool}` | {a['p95']:.1f} | {b['p95']:.1f} | {ratio:.2f} |\n"
    calm, loud = len(quiet["errors"]), len(flooded["errors"])
    tally = ", ".join(f"{k}: {v:,}" for k, v in sorted(flooded["flood"].items()))
    ok = worst <= 2 and loud <= max(2 * calm, 0)
    verdict = "**PASS**" if ok else "**FAIL**"
    return f"""
### One user flooding (issue: hosted hardening)

The same run again while one more signed-in user opens sessions without end (keeping them open),
holds as many calls waiting for a reply as it can (two sessions, 25 waiting calls each, over and
over) and sends requests on four connections as fast as they go. What the flooder got: {tally}
(the per-user caps: `LORE_USER_MAX_SESSIONS`, `LORE_USER_RATE`/`LORE_USER_BURST`,
`LORE_USER_MAX_WAITS`; docs/deploy.md). The other users, meanwhile:

{rows}
Errors of the other users: {calm} quiet, {loud} while flooded. Most connections held while flooded:
{", ".join(f"{k}: {v}" for k, v in sorted(flooded["peak"].items()))}.

| target | measured | result |
|---|---|---|
| the others' p95 and errors within 2x of the quiet run | {worst:.2f}x; {loud} vs {calm} errors | {verdict} |
"""


SCALE_SECTION = "## HTTP scale-out"


def start_server(env: dict[str, str], log: Path, *extra: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(BIN / "lore"), "serve", "--sign-in", "--port", str(port), *extra],
            env=env,
            stdout=out,
            stderr=out,
        )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx2.get(f"{url}/readyz", timeout=2).status_code == 200:
                return proc, url
        except httpx2.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"lore serve did not start:\n{log.read_text()}")


def scale_out(
    args: argparse.Namespace,
    env: dict[str, str],
    db_url: str,
    tokens: dict[str, str],
    tmp: Path,
    first: tuple[subprocess.Popen[bytes], str],
) -> int:
    """The documented scale-out path (docs/deploy.md, Replicas): N `lore serve` processes on one
    database, the sessions spread round robin, the same mix; calls/s for each N."""
    counts = [int(n) for n in args.scale.split(",")]
    servers: list[tuple[subprocess.Popen[bytes], str]] = [first]
    rows = []
    try:
        for n in counts:
            while len(servers) < n:
                servers.append(start_server(env, tmp / f"serve-{len(servers)}.log"))
            urls = [url for _, url in servers[:n]]
            print(f"{n} servers; {args.sessions} sessions for {args.seconds:g} s ...", file=sys.stderr)
            cpu = [cpu_seconds(p.pid) for p, _ in servers[:n]]
            run = anyio.run(drive, args, urls, db_url, tokens, tmp / "home", args.sessions, args.seconds)
            calls = sum(len(v) for v in run["out"].values())
            used = sum(cpu_seconds(p.pid) - c for (p, _), c in zip(servers[:n], cpu, strict=True))
            every = sorted(t for v in run["out"].values() for t in v)
            p95 = every[int(len(every) * 0.95)] if every else 0.0
            rows.append((n, calls / run["elapsed"], len(run["errors"]), p95, used / max(1, calls) * 1000))
    finally:
        for proc, _ in servers:
            stop_process(proc, timeout=120)
    base = rows[0][1]
    table = "\n".join(
        f"| {n} | {rate:.0f} | {rate / base:.2f}x | {p95:.0f} | {cpu:.1f} | {errors} |"
        for n, rate, errors, p95, cpu in rows
    )
    section = f"""{SCALE_SECTION}

The mix of the HTTP load section ({args.sessions} sessions, {args.users} users, {args.seconds:g} s
each) over N `lore serve --sign-in` processes on one database, the sessions spread round robin (what
a load balancer does, docs/deploy.md); the database, the client and every server share this
machine's 2 cores, so this shows what an added process costs and gives here, not what it gives on
its own cores.

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}

| servers | calls/s | vs one | p95 ms | server CPU per call, ms | errors |
|---:|---:|---:|---:|---:|---:|
{table}

Rerun: `.venv/bin/python bench/http_load.py --scale {args.scale} --seconds {args.seconds:g} --write`
"""
    print(section)
    if args.write:
        replace_section(DOC, SCALE_SECTION, section)
    return 0


TEAM_SECTION = "## Team mode: replicas behind a load balancer, with and without a pooler"


def team(
    args: argparse.Namespace, env: dict[str, str], db_url: str, tokens: dict[str, str], tmp: Path
) -> int:
    """Docs/deploy.md's team setup on this machine: N `lore serve --sign-in --stateless` replicas
    behind HAProxy (round robin, no stickiness; started here as the tests start it), reaching
    PostgreSQL directly or through PgBouncer in transaction mode (LISTEN on the direct URL). The
    same mix as the HTTP load section, every session through the balancer. CPU per call is counted
    for the replicas alone and for everything serving (replicas, PostgreSQL and its backends,
    PgBouncer, HAProxy), so the figure carries to a machine with more cores."""
    from support.infra import start_haproxy, start_pgbouncer

    counts = [int(n) for n in args.team.split(",")]
    status = embedded.status(env)
    assert status.pid is not None
    rows = []
    for pooled in (False, True):
        bouncer = start_pgbouncer(db_url, pool_size=args.bouncer_pool) if pooled else None
        try:
            for n in counts:
                replica_env = {**env, "LORE_DATABASE_URL": db_url}
                if bouncer is not None:
                    replica_env.update(
                        LORE_DATABASE_URL=bouncer.url,
                        LORE_DATABASE_POOLER="transaction",
                        LORE_LISTEN_URL=db_url,
                    )
                servers = [
                    start_server(replica_env, tmp / f"team-{pooled}-{n}-{i}.log", "--stateless")
                    for i in range(n)
                ]
                # Checked as a production balancer would (every 2 s, out after 3 failures): under
                # this load a 300 ms check that times out twice would take the only replica out.
                ports = [int(url.rsplit(":", 1)[1]) for _, url in servers]
                lb = start_haproxy(ports, check="inter 2s fall 3 rise 1")
                try:
                    lb.wait({f"r{i + 1}": "UP" for i in range(n)})
                    warm_up(db_url)
                    label = f"{n} replica{'s' if n > 1 else ''}, {'PgBouncer' if pooled else 'direct'}"
                    print(f"{label}: {args.sessions} sessions for {args.seconds:g} s ...", file=sys.stderr)
                    others = [status.pid, lb.proc.pid] + ([bouncer.proc.pid] if bouncer is not None else [])
                    cpu = [cpu_seconds(p.pid) for p, _ in servers]
                    rest = [tree_cpu_seconds(pid) for pid in others]
                    client = sum(os.times()[:2])
                    load = os.getloadavg()[0]
                    STATUSES.clear()
                    run = anyio.run(
                        drive, args, lb.url, db_url, tokens, tmp / "home", args.sessions, args.seconds
                    )
                    calls = sum(len(v) for v in run["out"].values())
                    used = sum(cpu_seconds(p.pid) - c for (p, _), c in zip(servers, cpu, strict=True))
                    around = sum(tree_cpu_seconds(pid) - c for pid, c in zip(others, rest, strict=True))
                    client = sum(os.times()[:2]) - client
                    every = sorted(t for v in run["out"].values() for t in v)
                    p95 = every[int(len(every) * 0.95)] if every else 0.0
                    rows.append(
                        {
                            "label": label,
                            "rate": calls / run["elapsed"],
                            "p95": p95,
                            "replica_ms": used / max(1, calls) * 1000,
                            "all_ms": (used + around) / max(1, calls) * 1000,
                            "client_ms": client / max(1, calls) * 1000,
                            "errors": len(run["errors"]),
                            "connections": run["peak"].get("(all but the sampler)", 0),
                            "load": load,
                            "statuses": ", ".join(
                                f"{n} x {what[:40]}" for what, n in STATUSES.most_common(3)
                            ),
                        }
                    )
                    for line in run["errors"][:5]:
                        print("error:", line, file=sys.stderr)
                finally:
                    lb.stop()
                    for proc, _ in servers:
                        stop_process(proc, timeout=120)
        finally:
            if bouncer is not None:
                bouncer.stop()
    base = rows[0]["rate"]
    lines = []
    for r in rows:
        errors = f"{r['errors']} ({r['statuses']})" if r["statuses"] else str(r["errors"])
        lines.append(
            f"| {r['label']} | {r['rate']:.0f} | {r['rate'] / base:.2f}x | {r['p95']:.0f} | "
            f"{r['replica_ms']:.1f} | {r['all_ms']:.1f} | {r['client_ms']:.1f} | "
            f"{r['connections']} | {errors} | {r['load']:.1f} |"
        )
    table = "\n".join(lines)
    embedder = env.get("LORE_EMBEDDER", "default (local)")
    section = f"""{TEAM_SECTION}

The team setup of docs/deploy.md on this one machine: N `lore serve --sign-in --stateless`
replicas behind HAProxy 2.6 (round robin, no stickiness, each checked on `/readyz`), reaching
PostgreSQL directly or through PgBouncer 1.18 in transaction mode (`default_pool_size =
{args.bouncer_pool}`; LISTEN on the direct URL). The mix of the HTTP load section: {args.sessions}
sessions of {args.users} users, every request through the balancer, {args.seconds:g} s each;
embedder `{embedder}`; `LORE_POOL_SIZE={args.pool}` per replica.

**The same 2 cores serve everything here**: the replicas, PostgreSQL, PgBouncer, HAProxy and the
load generator (the SDK's client, one process). So more replicas cannot add calls/s on this
machine; what carries to a bigger one is the CPU per call: "replicas" is the `lore serve`
processes' own, "all serving" adds PostgreSQL (postmaster and backends), PgBouncer and HAProxy.
Divide the cores you give lore by it for a ceiling, then keep headroom (p95 grows with the queue).
Other engineers' work shares the machine too: the last column is its 1-minute load average when
each run began (2 means both cores were already busy), so compare rows with that in mind.

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}

| setup | calls/s | vs first | p95 ms | CPU/call, replicas, ms | CPU/call, all serving, ms \
| CPU/call, client, ms | most PostgreSQL connections | errors | load average before |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
{table}

Rerun: `.venv/bin/python bench/http_load.py --team {args.team} --seconds {args.seconds:g} --write`
"""
    print(section)
    if args.write:
        replace_section(DOC, TEAM_SECTION, section)
    return 1 if any(r["errors"] for r in rows) else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--baseline-seconds", type=float, default=10, help="one session alone, first")
    ap.add_argument("--profile", type=Path, help="py-spy's raw samples of the server (pip install py-spy)")
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--users", type=int, default=10)
    ap.add_argument("--notes", type=int, default=200, help="notes per user before the run")
    ap.add_argument("--pool", type=int, default=4, help="the server's LORE_POOL_SIZE")
    ap.add_argument("--flood", action="store_true", help="then the same run while one more user floods")
    ap.add_argument("--write", action="store_true", help=f"update '{SECTION}' in docs/benchmarks.md")
    ap.add_argument(
        "--scale",
        metavar="N,N,...",
        help=f"instead: the same load over N `lore serve` processes on one database ('{SCALE_SECTION}')",
    )
    ap.add_argument(
        "--team",
        metavar="N,N,...",
        help=f"instead: N --stateless replicas behind HAProxy, direct and via PgBouncer ('{TEAM_SECTION}')",
    )
    ap.add_argument("--bouncer-pool", type=int, default=6, help="--team: PgBouncer's default_pool_size")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-http-", dir="/tmp"))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp),
        "LORE_DATA_DIR": str(tmp / "data"),
        "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
        "LORE_CONFIG": str(tmp / "none.toml"),
        "LORE_POOL_SIZE": str(args.pool),
    }
    if "LORE_EMBEDDER" in os.environ:
        env["LORE_EMBEDDER"] = os.environ["LORE_EMBEDDER"]
    server: subprocess.Popen[bytes] | None = None
    try:
        db_url = embedded.start(env)
        tokens = prepare(db_url, args.users + (1 if args.flood else 0), tmp / "home", args.notes)
        flooder = f"user{args.users:02d}" if args.flood else None
        if args.team:
            return team(args, env, db_url, tokens, tmp)
        server, url = start_server(env, tmp / "serve.log")
        warm_up(db_url)
        if args.scale:
            return scale_out(args, env, db_url, tokens, tmp, (server, url))
        print(f"serving {url}; {args.sessions} sessions for {args.seconds:g} s ...", file=sys.stderr)
        home = tmp / "home"
        quiet = {u: t for u, t in tokens.items() if u != flooder}
        alone = anyio.run(drive, args, url, db_url, quiet, home, 1, args.baseline_seconds)
        server_cpu, client_cpu = cpu_seconds(server.pid), sum(os.times()[:2])
        spy = None
        if args.profile:  # py-spy samples every thread of the server during the 50-session run
            spy_cmd = [str(BIN / "py-spy"), "record", "--pid", str(server.pid), "--format", "raw"]
            spy_cmd += ["--threads", "--nonblocking", "-d", str(int(args.seconds)), "-o", str(args.profile)]
            spy = subprocess.Popen(spy_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run = anyio.run(drive, args, url, db_url, quiet, home, args.sessions, args.seconds)
        if spy is not None:
            spy.wait(timeout=120)
        run["alone"] = alone
        rss = rss_mb(server.pid)
        run["cpu"] = (cpu_seconds(server.pid) - server_cpu, sum(os.times()[:2]) - client_cpu)
        embedder = env.get("LORE_EMBEDDER", "default (local)")
        section = report(args, run, embedder, rss)
        if flooder is not None:
            print(f"again, while {flooder} floods ...", file=sys.stderr)
            flooded = anyio.run(drive, args, url, db_url, tokens, home, args.sessions, args.seconds, flooder)
            section += flood_report(run, flooded)
        print(section)
        for what, times in STATUSES.most_common(10):  # the HTTP answers behind the errors
            print(f"status: {times} x {what}", file=sys.stderr)
        for line in (alone["errors"] + run["errors"])[:10]:
            print("error:", line, file=sys.stderr)
        if args.write:
            replace_section(DOC, SECTION, section)
            print(f"updated {DOC}", file=sys.stderr)
        return 1 if run["errors"] or alone["errors"] else 0
    except KeyboardInterrupt:
        return 130
    finally:
        if server is not None:
            stop_process(server, timeout=120)
        embedded.stop(env)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
