"""Soak: many concurrent agent sessions (real `lore mcp` stdio processes, the SDK's client) mixing every
write and read for minutes; a client-side ledger of every acknowledged write is checked against the
database at the end.

Checks (any failure exits 1):
  lost        every acknowledged write is in the database (facts and their revisions, notes, links,
              tasks and each status change, messages, forgets)
  duplicated  nothing is there twice, and nothing is there that was not acknowledged
  invariants  one current version per lineage (none once forgotten), no edge to a missing note, every
              task has its note and its events, every message delivered to exactly one reader at most
  orphans     no `lore mcp` process and no database connection of lore outlives its session

Runs on a private embedded PostgreSQL (a temporary LORE_DATA_DIR under /tmp, stopped and removed at the
end), with LORE_EMBEDDER=fake (embedding is not what this measures; the background worker still runs).

Rerun:  .venv/bin/python bench/soak.py                 32 sessions, 120 s (make bench)
        .venv/bin/python bench/soak.py --short         8 sessions, 6 s (CI: tests/reliability/test_soak.py)
        --sessions N --seconds S --seed K; --write replaces the "Soak" section of docs/reliability.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import Implementation, TextContent
from scratch import root_base

from lore.db import embedded, migrate

LORE = str(Path(sys.executable).parent / "lore")
SPACES = ("red", "green", "blue", "gold")
DOC = Path(__file__).resolve().parent.parent / "docs" / "reliability.md"
WORDS = ["deploy", "schema", "migration", "cache", "retry", "index", "queue", "token", "budget", "search"]
MIX = [  # (operation, weight)
    ("remember_fact", 22),
    ("revise_fact", 10),
    ("forget", 4),
    ("remember_note", 14),
    ("search_notes", 10),
    ("recall_facts", 5),
    ("link_notes", 5),
    ("file_task", 8),
    ("update_task", 7),
    ("send_message", 9),
    ("read_messages", 6),
]


@dataclass
class Ledger:
    """Every acknowledged write, by id; shared by all sessions (one asyncio loop, no locks needed)."""

    facts: dict[str, list[str]] = field(default_factory=dict)  # f_id -> acked statements, in order
    notes: dict[str, str] = field(default_factory=dict)  # n_id -> body
    forgotten: set[str] = field(default_factory=set)
    edges: set[tuple[str, str, str]] = field(default_factory=set)
    tasks: dict[str, str] = field(default_factory=dict)  # n_id -> title
    task_updates: Counter[str] = field(default_factory=Counter)
    messages: dict[str, str] = field(default_factory=dict)  # m_id -> body
    delivered: Counter[str] = field(default_factory=Counter)  # m_id -> times read_messages returned it
    by_space: dict[str, dict[str, list[str]]] = field(
        default_factory=lambda: {s: defaultdict(list) for s in SPACES}
    )
    ops: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    problems: list[str] = field(default_factory=list)


def _text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def _kind_of_error(text: str) -> str:
    for key, words in (
        ("conflict", "at the same moment"),
        ("gone", "forgotten or replaced"),
        ("not found", "No "),
        ("refused", "Refused"),
        ("database", "PostgreSQL"),
    ):
        if words in text:
            return key
    return "other"


async def session_loop(
    index: int,
    env: dict[str, str],
    workspace: Path,
    space: str,
    ledger: Ledger,
    start: asyncio.Event,
    deadline: list[float],
    ready: list[int],
    errlog: Any,
) -> None:
    rng = random.Random(index * 7919 + int(env["SOAK_SEED"]))
    params = StdioServerParameters(command=LORE, args=["mcp"], env=env, cwd=str(workspace))
    name = f"soak-{index}"
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, client_info=Implementation(name=name, version="1")) as session,
    ):
        await session.initialize()
        await session.call_tool("recall_facts", {})  # session resolved, pool connected
        ready[0] += 1
        await start.wait()
        n = 0
        names, weights = zip(*MIX, strict=True)
        while time.monotonic() < deadline[0]:
            n += 1
            op = rng.choices(names, weights)[0]
            args = _arguments(op, rng, space, name, n, ledger)
            if args is None:
                continue
            began = time.perf_counter()
            try:
                async with asyncio.timeout(120):
                    result = await session.call_tool(op, args)
            except TimeoutError:
                ledger.problems.append(f"{name}: {op} got no answer within 120 s")
                continue
            ledger.latencies[op].append(time.perf_counter() - began)
            ledger.ops[op] += 1
            if result.is_error:
                said = _text(result)
                ledger.errors[f"{op}: {_kind_of_error(said)}"] += 1
                if "Traceback" in said or _kind_of_error(said) in ("database", "other"):
                    ledger.problems.append(f"{name}: {op} {args} -> {said[:200]}")
                continue
            _record(op, args, result.structured_content or {}, space, ledger)


def _arguments(
    op: str, rng: random.Random, space: str, name: str, n: int, ledger: Ledger
) -> dict[str, Any] | None:
    mine = ledger.by_space[space]
    words = " ".join(rng.sample(WORDS, 3))
    token = f"{name}-{n}"
    if op == "remember_fact":
        return {"statement": f"{token} {words}"}
    if op == "revise_fact":
        return (
            {"id": rng.choice(mine["facts"]), "statement": f"{token} revised {words}"}
            if mine["facts"]
            else None
        )
    if op == "forget":
        pool = mine["facts"] + mine["notes"]
        return {"id": rng.choice(pool), "reason": f"{token} soak"} if pool else None
    if op == "remember_note":
        return {"body": f"{token} note about {words}", "kind": rng.choice(["note", "tech", "decision"])}
    if op == "search_notes":
        return {"query": words}
    if op == "recall_facts":
        return {}
    if op == "link_notes":
        if len(mine["notes"]) < 2:
            return None
        a, b = rng.sample(mine["notes"], 2)
        return {"from": a, "relation": rng.choice(["relates_to", "refines", "depends_on"]), "to": b}
    if op == "file_task":
        target = rng.choice(SPACES)
        return {"title": f"{token} task", "body": words, **({"to": target} if target != space else {})}
    if op == "update_task":
        return (
            {"id": rng.choice(mine["tasks"]), "status": rng.choice(["doing", "blocked", "done", "todo"])}
            if mine["tasks"]
            else None
        )
    if op == "send_message":
        return {"to": rng.choice(SPACES), "body": f"{token} message {words}"}
    return {}  # read_messages


def _record(op: str, args: dict[str, Any], out: dict[str, Any], space: str, ledger: Ledger) -> None:
    mine = ledger.by_space[space]
    if op == "remember_fact":
        ledger.facts[out["id"]] = [args["statement"]]
        mine["facts"].append(out["id"])
    elif op == "revise_fact":
        ledger.facts[args["id"]].append(args["statement"])
    elif op == "forget":
        ledger.forgotten.add(args["id"])
        for key in ("facts", "notes"):
            if args["id"] in mine[key]:
                mine[key].remove(args["id"])
    elif op == "remember_note":
        ledger.notes[out["id"]] = args["body"]
        mine["notes"].append(out["id"])
    elif op == "link_notes" and out.get("created"):
        ledger.edges.add((args["from"], args["relation"], args["to"]))
    elif op == "file_task":
        ledger.tasks[out["id"]] = args["title"]
        ledger.by_space[out["space"]]["tasks"].append(out["id"])
    elif op == "update_task":
        ledger.task_updates[args["id"]] += 1
    elif op == "send_message":
        ledger.messages[out["id"]] = args["body"]
    elif op == "read_messages":
        for message in out.get("messages", []):
            ledger.delivered[message["id"]] += 1


def verify(url: str, ledger: Ledger) -> dict[str, int]:
    """Compare the ledger with the database; returns counts, appends problems."""
    bad = ledger.problems
    with psycopg.connect(url) as conn:
        versions: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        for lineage, statement, current in conn.execute(
            "SELECT lineage, statement, superseded_at IS NULL FROM facts "
            "ORDER BY lineage, recorded_at, version_id"
        ):
            versions[f"f_{lineage}"].append((statement, current))
        for fid, acked in ledger.facts.items():
            stored = [s for s, _ in versions.get(fid, [])]
            # revisions commit in lock order; their answers may reach the clients in another order
            if stored[:1] != acked[:1] or sorted(stored) != sorted(acked):
                bad.append(f"{fid}: acknowledged {acked}, stored {stored}")
            current = sum(c for _, c in versions.get(fid, []))
            if current != (0 if fid in ledger.forgotten else 1):
                bad.append(f"{fid}: {current} current versions (forgotten: {fid in ledger.forgotten})")
        for fid in versions.keys() - ledger.facts.keys():
            bad.append(f"{fid} is in the database but was never acknowledged")
        note_rows: dict[str, list[tuple[str, bool]]] = defaultdict(list)
        for lineage, body, current in conn.execute(
            "SELECT lineage, body, superseded_at IS NULL FROM notes WHERE kind <> 'task' OR lineage NOT IN "
            "(SELECT lineage FROM tasks) ORDER BY lineage, version_id"
        ):
            note_rows[f"n_{lineage}"].append((body, current))
        for nid, body in ledger.notes.items():
            rows = note_rows.get(nid, [])
            if [b for b, _ in rows] != [body]:
                bad.append(f"{nid}: acknowledged {body!r}, stored {rows}")
            elif rows[0][1] == (nid in ledger.forgotten):
                bad.append(f"{nid}: current={rows[0][1]} but forgotten={nid in ledger.forgotten}")
        for nid in note_rows.keys() - ledger.notes.keys():
            bad.append(f"{nid} is in the database but was never acknowledged")
        edges = {
            (f"n_{f}", r, f"n_{t}")
            for f, r, t in conn.execute("SELECT from_note, relation, to_note FROM edges")
        }
        if edges != ledger.edges:
            bad.append(f"edges: missing {ledger.edges - edges}, unacknowledged {edges - ledger.edges}")
        dangling = conn.execute(
            "SELECT count(*) FROM edges e WHERE NOT EXISTS "
            "(SELECT 1 FROM notes n WHERE n.lineage = e.from_note) "
            "OR NOT EXISTS (SELECT 1 FROM notes n WHERE n.lineage = e.to_note)"
        ).fetchone()
        if dangling and dangling[0]:
            bad.append(f"{dangling[0]} edges point to a missing note")
        tasks = {
            f"n_{lineage}": (title, events)
            for lineage, title, events in conn.execute(
                "SELECT t.lineage, n.title, (SELECT count(*) FROM task_events e WHERE e.lineage = t.lineage) "
                "FROM tasks t JOIN notes n ON n.lineage = t.lineage AND n.superseded_at IS NULL"
            )
        }
        for tid, title in ledger.tasks.items():
            if tasks.get(tid, (None, 0))[0] != title:
                bad.append(f"task {tid} {title!r} is missing")
            elif tasks[tid][1] != 1 + ledger.task_updates[tid]:
                bad.append(
                    f"task {tid}: {tasks[tid][1]} events for {ledger.task_updates[tid]} acknowledged updates"
                )
        for tid in tasks.keys() - ledger.tasks.keys():
            bad.append(f"task {tid} is in the database but was never acknowledged")
        message_rows: dict[str, tuple[str, bool]] = {
            f"m_{i}": (body, read)
            for i, body, read in conn.execute("SELECT id, body, read_at IS NOT NULL FROM messages")
        }
        for mid, body in ledger.messages.items():
            if message_rows.get(mid, (None, False))[0] != body:
                bad.append(f"message {mid} {body!r} is missing")
        for mid in message_rows.keys() - ledger.messages.keys():
            bad.append(f"message {mid} is in the database but was never acknowledged")
        for mid, times in ledger.delivered.items():
            if times > 1:
                bad.append(f"message {mid} was delivered {times} times")
            if not message_rows.get(mid, ("", False))[1]:
                bad.append(f"message {mid} was delivered but is not marked read")
        forgets = {
            f"{'f' if kind == 'fact' else 'n'}_{lineage}"
            for kind, lineage in conn.execute("SELECT item_kind, lineage FROM forget_log")
        }
        if forgets != ledger.forgotten:
            bad.append(
                f"forget log: missing {ledger.forgotten - forgets}, extra {forgets - ledger.forgotten}"
            )
        return {
            "fact versions": sum(len(v) for v in versions.values()),
            "notes": len(note_rows),
            "edges": len(edges),
            "tasks": len(tasks),
            "task events": sum(e for _, e in tasks.values()),
            "messages": len(message_rows),
            "messages delivered": sum(ledger.delivered.values()),
            "forgotten": len(forgets),
        }


def orphans(root: Path) -> list[int]:
    """`lore mcp` processes still running with this soak's data dir."""
    left = []
    marker = f"LORE_DATA_DIR={root}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if b"mcp" in (entry / "cmdline").read_bytes() and marker in (entry / "environ").read_bytes():
                left.append(int(entry.name))
        except OSError:
            continue
    return left


def lore_connections(url: str, wait: float = 15) -> int:
    end = time.monotonic() + wait
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lore'"
            ).fetchone()
            count = int(row[0]) if row else 0
            if not count or time.monotonic() > end:
                return count
            time.sleep(0.2)


async def run(sessions: int, seconds: float, seed: int, root: Path) -> tuple[Ledger, dict[str, Any]]:
    env_base = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "LORE_DATA_DIR": str(root),
        "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
        "LORE_CONFIG": str(root / "config.toml"),
        "LORE_EMBEDDER": "fake",
        "SOAK_SEED": str(seed),
    }
    dirs = {s: root / "code" / s for s in SPACES}
    blocks = []
    for space, path in dirs.items():
        path.mkdir(parents=True)
        others = ", ".join(f'"{o}"' for o in SPACES if o != space)
        blocks.append(f'[[space]]\nid = "{space}"\npaths = ["{path}"]\naccepts_from = [{others}]\n')
    (root / "config.toml").write_text("\n".join(blocks))
    url = embedded.start(env_base)
    with psycopg.connect(url) as conn:
        migrate.upgrade(conn)
    ledger = Ledger()
    start, deadline, ready = asyncio.Event(), [0.0], [0]
    began = time.monotonic()

    async def go() -> None:
        while ready[0] < sessions:
            await asyncio.sleep(0.1)
        deadline[0] = time.monotonic() + seconds
        start.set()

    with open(root / "sessions.log", "w") as errlog:  # the servers' stderr (session lines, warnings)
        async with asyncio.TaskGroup() as group:
            for i in range(sessions):
                space = SPACES[i % len(SPACES)]
                group.create_task(
                    session_loop(i, env_base, dirs[space], space, ledger, start, deadline, ready, errlog)
                )
            group.create_task(go())
    startup = deadline[0] - seconds - began
    figures: dict[str, Any] = {"startup_s": startup}
    figures["counts"] = verify(url, ledger)
    figures["orphan_processes"] = orphans(root)
    figures["open_connections"] = lore_connections(url)
    if figures["orphan_processes"]:
        ledger.problems.append(f"orphan lore mcp processes: {figures['orphan_processes']}")
    if figures["open_connections"]:
        ledger.problems.append(f"{figures['open_connections']} lore connections left open")
    return ledger, figures


def report(args: argparse.Namespace, ledger: Ledger, figures: dict[str, Any], took: float) -> str:
    total = sum(ledger.ops.values())
    lines = [
        f"- {args.sessions} concurrent `lore mcp` stdio sessions (SDK client) in {len(SPACES)} spaces, "
        f"{args.seconds:.0f} s of load after {figures['startup_s']:.1f} s of start-up; seed {args.seed}; "
        f"{platform.machine()}, {os.cpu_count()} cores, {datetime.now(UTC):%Y-%m-%d}.",
        f"- {total:,} tool calls ({total / args.seconds:,.0f}/s): "
        + ", ".join(f"{op} {n:,}" for op, n in ledger.ops.most_common())
        + ".",
        "- Expected refusals (another session changed or forgot the item first): "
        + (", ".join(f"{k} {n}" for k, n in sorted(ledger.errors.items())) or "none")
        + ".",
        "- In the database at the end: "
        + ", ".join(f"{k} {v:,}" for k, v in figures["counts"].items())
        + ".",
        "- Latency per call, p50 / p95 (ms): "
        + ", ".join(
            f"{op} {statistics.median(v) * 1000:.0f} / {statistics.quantiles(v, n=20)[-1] * 1000:.0f}"
            for op, v in sorted(ledger.latencies.items())
            if len(v) >= 2
        )
        + ".",
        f"- Lost, duplicated or unacknowledged: {len(ledger.problems) or 0} problems; orphan processes: "
        f"{len(figures['orphan_processes'])}; lore connections left: {figures['open_connections']}.",
    ]
    if ledger.problems:
        lines.append(f"- PROBLEMS ({len(ledger.problems)}): " + "; ".join(ledger.problems[:20]))
    lines.append(f"- Whole run: {took:.0f} s.")
    return "\n".join(lines)


def write_doc(text: str) -> None:
    doc = DOC.read_text()
    section = f"<!-- soak:begin -->\n{text}\n<!-- soak:end -->"
    new = re.sub(r"<!-- soak:begin -->.*?<!-- soak:end -->", lambda _: section, doc, flags=re.S)
    DOC.write_text(new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="8 sessions, 6 s (CI)")
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--seed", type=int, default=int(os.environ.get("SOAK_SEED", "1")))
    parser.add_argument(
        "--write", action="store_true", help="replace the Soak section of docs/reliability.md"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()
    args.sessions = args.sessions or (8 if args.short else 32)
    args.seconds = args.seconds or (6.0 if args.short else 120.0)
    root = Path(tempfile.mkdtemp(prefix="lore-soak-", dir="/tmp"))
    started = time.monotonic()
    try:
        ledger, figures = asyncio.run(run(args.sessions, args.seconds, args.seed, root))
    finally:
        embedded.stop({"LORE_DATA_DIR": str(root)})
        shutil.rmtree(root, ignore_errors=True)
    text = report(args, ledger, figures, time.monotonic() - started)
    print(text)
    if args.json:
        print(
            json.dumps({"ops": ledger.ops, "errors": ledger.errors, **figures, "problems": ledger.problems})
        )
    if args.write and not ledger.problems:
        write_doc(text)
    return 1 if ledger.problems else 0


if __name__ == "__main__":
    sys.exit(main())
