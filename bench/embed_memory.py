"""What the local embedder costs in memory and speed, per batching rule (the server's RSS).

Each case runs in a fresh process (onnxruntime's arena keeps its largest buffers for the life of a
process, so cases must not share one): load all-MiniLM-L6-v2-int8, embed 400 short texts (7 to 16
words, like a dialog turn or a fact), then 20 calls of 16 long notes (one length per call, rising
from 50 to 240 words; the model cuts at 256 tokens), then 200 single queries. Reported: texts/s of
each, query p50, and the resident memory after loading, after the long notes and at the end. The
rules: lore's (at most 16 texts and 256 padded tokens a batch), a looser token bound, 16 texts a
batch whatever their length (lore before), one text a call.

Rerun: .venv/bin/python bench/embed_memory.py [--write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from procs import rss_mb
from report import commit, machine, replace_section

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
SECTION = "## Server memory: the embedder"
RULES = {  # name -> (most texts, padded tokens) per batch
    "lore: at most 16 texts and 256 padded tokens": (16, 256),
    "at most 16 texts and 1,024 padded tokens": (16, 1024),
    "16 texts whatever their length (before)": (16, 10**9),
    "one text per call": (1, 10**9),
}


def case(most: int, tokens: int) -> dict[str, float]:
    """One rule, in this process."""
    from lore.embeddings import local

    local.BATCH, local.BATCH_TOKENS = most, tokens
    model = local.MiniLM(os.environ)
    model.embed(["warm up"])
    out = {"loaded": rss_mb()}
    words = ["we", "moved", "the", "deploy", "to", "tuesdays", "after", "the", "outage", "and", "the"]
    words += ["review", "ran", "late", "again"]
    short = [f"turn {i}: " + " ".join(words[: 6 + i % 10]) for i in range(400)]
    # 20 calls of 16 notes each, the notes of a call of one length, rising from 50 to 240 words.
    long = [[" ".join((words * 20)[: 50 + 10 * i])] * 16 for i in range(20)]
    started = time.perf_counter()
    model.embed(short)
    out["short"] = len(short) / (time.perf_counter() - started)
    started = time.perf_counter()
    for texts in long:
        model.embed(texts)
    out["long"] = sum(map(len, long)) / (time.perf_counter() - started)
    out["after_long"] = rss_mb()
    times = []
    for i in range(200):
        started = time.perf_counter()
        model.embed([f"when did we move the deploy to tuesdays {i}"])
        times.append((time.perf_counter() - started) * 1000)
    out["query_ms"] = statistics.median(times)
    out["end"] = rss_mb()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--write", action="store_true", help=f"replace '{SECTION}' in docs/benchmarks.md")
    ap.add_argument("--case", nargs=2, type=int, help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args()
    if args.case:
        print(json.dumps(case(*args.case)))
        return 0
    rows = []
    for name, (most, tokens) in RULES.items():
        done = subprocess.run(
            [sys.executable, __file__, "--case", str(most), str(tokens)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append(
            f"| {name} | {r['short']:.0f} | {r['long']:.0f} | {r['query_ms']:.1f} | {r['loaded']:.0f} "
            f"| {r['after_long']:.0f} | {r['end']:.0f} |"
        )
        print(rows[-1], flush=True)
    section = f"""{SECTION}

Most of `lore serve`'s resident memory is the embedding model: the server holds about 100 MB
without it (`LORE_EMBEDDER=none`, HTTP load section). onnxruntime turns the int8 model (23 MB on
disk) into float weights when it builds the session (graph optimisation folds them; with it off the
session holds 50 MB but a query takes 100 ms instead of 5-9): 210 MB resident after loading, of which
about 60 MB are the optimiser's temporaries, already freed but kept by glibc until lore hands them
back (`malloc_trim`), leaving about 165 MB. Then memory grew with the largest batch embedded, because
onnxruntime's arena keeps it: 16 long notes a batch held about 870 MB in this test, so batches are
bounded by padded tokens as well as by count. One process per rule:

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}

| batching | short texts/s | long texts/s | query p50 ms | RSS MB loaded | after long texts | at the end |
|---|---:|---:|---:|---:|---:|---:|
{chr(10).join(rows)}

In the 50-session HTTP mix (HTTP load section) the server now ends at about 280 MB, against 411 MB
before both changes (2026-12-01: 320 MB with the token bound alone, 279 MB with the trim as well;
back to back with a 512-token bound, 410 MB and 77 calls/s before against 347 MB and 78 calls/s
after: throughput on this machine varies more from hour to hour than between the two). Limiting
glibc's malloc arenas (MALLOC_ARENA_MAX=2) saved 13 MB more in one run; lore does not set it.

Rerun: `.venv/bin/python bench/embed_memory.py --write`
"""
    print(section)
    if args.write:
        replace_section(DOC, SECTION, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
