"""What a note's context and the keyword side's term counts cost (docs/design.md, Retrieval).

1. The write path: `lore.store.notes.remember` (one note, one transaction) into a space that already
   holds `--notes` notes, with migration 0022's term-count trigger on and, in turn, off (the write as
   it was before), alternating batch by batch on the same database so that both see the same load.
2. The embedding worker's context step (`lore.store.context.fill`), per note, with the next note's
   arrival re-indexing the previous one (context_after: one more UPDATE, the previous note's keyword
   text made again) and without (that UPDATE left out): the chosen design against the other.
3. The worker's embedding of a note with its context against without (the text is longer).

Notes: synthetic engineering notes (bench/corpus.py), each in one of 20 sessions.
Rerun: .venv/bin/python bench/context_cost.py [--notes 5000] [--write]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus
from report import commit, machine, replace_section
from scratch import root_base

from lore.core.session import Origin
from lore.db import embedded, migrate

REPO = Path(__file__).resolve().parent.parent
SECTION = "## Context at write time: what it costs"


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[int(0.95 * (len(ordered) - 1))] * 1000


def row(label: str, values: list[float]) -> str:
    return f"| {label} | {len(values)} | {p50(values):.2f} | {p95(values):.2f} |"


def writes(conn: psycopg.Connection, rng: random.Random, count: int, *, trigger: bool) -> list[float]:
    from lore.store import notes

    conn.execute(f"ALTER TABLE notes {'ENABLE' if trigger else 'DISABLE'} TRIGGER notes_terms")
    conn.commit()
    out = []
    for _ in range(count):
        kind, title, body, tags = corpus.note(rng)
        origin = Origin("bench", "bench", "/w", session=f"s{rng.randrange(20)}")
        started = time.perf_counter()
        notes.remember(conn, origin, body, kind=kind, title=title, tags=tags)
        out.append(time.perf_counter() - started)
    return out


def inside(conn: psycopg.Connection, rng: random.Random, count: int) -> tuple[list[float], list[float]]:
    """Server-side, per note: the INSERT's execution time and the term-count trigger's share of it
    (EXPLAIN ANALYZE, in seconds), which the machine's load moves far less than a client's clock."""
    import re

    whole, trigger = [], []
    for _ in range(count):
        kind, title, body, tags = corpus.note(rng)
        with conn.transaction():
            plan = conn.execute(
                "EXPLAIN (ANALYZE, FORMAT TEXT) INSERT INTO notes (lineage, space, kind, title, body, "
                "tags, source, session) VALUES (nextval('note_lineage_seq'), 'bench', %s, %s, %s, %s, "
                "'bench', 's0')",
                (kind, title, body, tags),
            ).fetchall()
        text = "\n".join(r[0] for r in plan)
        whole.append(float(re.search(r"Execution Time: ([\d.]+) ms", text).group(1)) / 1000)  # type: ignore[union-attr]
        found = re.search(r"Trigger notes_terms: time=([\d.]+)", text)
        trigger.append(float(found.group(1)) / 1000 if found else 0.0)
    return whole, trigger


def fills(conn: psycopg.Connection, *, after: bool) -> list[float]:
    """Per note: the context step, one note at a time (as the worker meets a note just written)."""
    from lore.store import context

    saved = context._AFTER
    if not after:
        context._AFTER = "SELECT %s, %s"  # the previous note left as it was
    out: list[float] = []
    try:
        while True:
            started = time.perf_counter()
            if not context.fill(conn, limit=1):
                return out
            out.append(time.perf_counter() - started)
    finally:
        context._AFTER = saved


def embeds(conn: psycopg.Connection, sample: int) -> tuple[float, float]:
    """Texts per second embedding `sample` notes as the worker does, with and without their context."""
    from lore.embeddings.runner import Runner
    from lore.store.vectors import BATCH, note_text

    rows = conn.execute(
        "SELECT title, tags, body, context_before FROM notes WHERE superseded_at IS NULL "
        "ORDER BY lineage LIMIT %s",
        (sample,),
    ).fetchall()
    runner = Runner({"LORE_EMBEDDER": "local", "LORE_EMBED_THREADS": "1"})
    runner.batch(["warm up"], timeout=600)
    rates = []
    for with_context in (True, False):
        texts = [note_text(t, g, b, c if with_context else None) for t, g, b, c in rows]
        started = time.perf_counter()
        for i in range(0, len(texts), BATCH):
            runner.batch(texts[i : i + BATCH], timeout=600)
        rates.append(len(texts) / (time.perf_counter() - started))
    runner.close()
    return rates[0], rates[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--notes", type=int, default=5000, help="notes in the space before the measured writes")
    p.add_argument("--writes", type=int, default=1000, help="measured writes, half with the trigger off")
    p.add_argument("--embed-sample", type=int, default=200)
    p.add_argument("--write", action="store_true", help=f"replace '{SECTION}' in docs/benchmarks.md")
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="lore-bench-context-", dir="/tmp"))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LORE_DATA_DIR": str(root / "data")}
    env["LORE_ROOT_BASE"] = root_base()
    url = embedded.start(env)
    rng = random.Random(42)
    try:
        with psycopg.connect(url) as conn:
            migrate.upgrade(conn)
            writes(conn, rng, args.notes, trigger=True)
            from lore.store import context

            context.rebuild(conn, everything=False)
            on: list[float] = []
            off: list[float] = []
            on_cpu: list[float] = []
            off_cpu: list[float] = []
            for _ in range(10):  # alternate: both see the same machine
                on += writes(conn, rng, args.writes // 20, trigger=True)
                off += writes(conn, rng, args.writes // 20, trigger=False)
            conn.execute("SET synchronous_commit = off")  # the same without the wait for the disk
            for _ in range(10):
                on_cpu += writes(conn, rng, args.writes // 20, trigger=True)
                off_cpu += writes(conn, rng, args.writes // 20, trigger=False)
            conn.execute("ALTER TABLE notes ENABLE TRIGGER notes_terms")
            conn.commit()
            insert_ms, trigger_ms = inside(conn, rng, args.writes // 2)
            context.rebuild(conn, everything=False)
            writes(conn, rng, args.writes, trigger=True)
            with_after = fills(conn, after=True)
            writes(conn, rng, args.writes, trigger=True)
            without_after = fills(conn, after=False)
            rate_with, rate_without = embeds(conn, args.embed_sample)
    finally:
        embedded.stop(env)
        shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()[0]
    text = f"""{SECTION}

What the context and the term counts add, measured on one embedded PostgreSQL 18 (lore's settings)
holding {args.notes:,} synthetic notes in 20 sessions of one space (bench/context_cost.py). The
write path (`lore.store.notes.remember`, one note per transaction) runs with migration 0022's
term-count trigger and, batch by batch in turn, without it (what a write did before); the context
itself is never on the write path: the embedding worker fills it (`lore.store.context.fill`, one
note at a time here, as the worker meets a note just written).

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}; load average at the end: {load:.1f} (a shared machine: other engineers'
  tests ran meanwhile, on both sides of each comparison alike)
- lore commit: {commit()}
- Command: `.venv/bin/python bench/context_cost.py --write`

| write path (`notes.remember`) | writes | p50 ms | p95 ms |
|---|---:|---:|---:|
{row("term counts kept (the trigger: this round)", on)}
{row("without them (as before)", off)}
{row("term counts kept, `synchronous_commit = off` (no wait for the disk)", on_cpu)}
{row("without them, `synchronous_commit = off`", off_cpu)}
{row("inside the server (EXPLAIN ANALYZE): the INSERT, its indexes and the trigger", insert_ms)}
{row("inside the server: the term-count trigger alone", trigger_ms)}

The worker's steps below run with `synchronous_commit = off` too (the disk's flush, ~4 ms here,
is the same for both and hid the difference).

| the worker's context step, per note | notes | p50 ms | p95 ms |
|---|---:|---:|---:|
{row("the next note re-indexes the previous one (chosen)", with_after)}
{row("the previous note left as it was", without_after)}

| embedding a note (all-MiniLM-L6-v2, the worker's batches, 1 thread) | notes/s |
|---|---:|
| its text and its context (the note before it) | {rate_with:.1f} |
| its text alone (as before) | {rate_without:.1f} |

The previous note's vector is never made again (its context_after reaches its keyword text only):
what the next note's arrival costs is the one UPDATE above, not a second embedding.
"""
    print(text)
    if args.write:
        replace_section(REPO / "docs" / "benchmarks.md", SECTION, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
