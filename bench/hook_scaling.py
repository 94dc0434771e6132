"""Is the session-start hook flat in the size of the space? `lore hook session-start` (a fresh
process each run) against spaces of 1,000 and of 100,000 facts, on two embedded PostgreSQL servers
started side by side, runs interleaved so that machine noise hits both alike (docs/design.md,
Session start; bench/hook_latency.py measures the hook against its floor).

Target: p50 at 100,000 facts within 1.2x of p50 at 1,000.

Rerun:  .venv/bin/python bench/hook_scaling.py [--runs 40] [--write]
(--write replaces the "Session-start hook and the size of the space" section of docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from hook_latency import BIN, DOC, SPACE, check_hook, seed
from report import commit, machine, replace_section
from scratch import root_base

from lore.db import embedded

SECTION = "## Session-start hook and the size of the space"
SIZES = (1_000, 100_000)
TARGET = 1.2


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-scale-", dir="/tmp"))
    envs: dict[int, dict[str, str]] = {}
    try:
        project = tmp / "work" / "acme-api"
        project.mkdir(parents=True)
        config = tmp / "config.toml"
        config.write_text(f'[[space]]\nid = "{SPACE}"\npaths = ["{project}"]\n')
        for n in SIZES:
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(tmp),
                "LORE_DATA_DIR": str(tmp / f"data-{n}"),
                "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
                "LORE_CONFIG": str(config),
            }
            print(f"seeding {n:,} facts ...", file=sys.stderr)
            seed(embedded.start(env), n, project.name)
            envs[n] = env
        stdin = json.dumps({"cwd": str(project), "source": "startup", "hook_event_name": "SessionStart"})
        hook = [str(BIN / "lore"), "hook", "session-start", "--client", "claude-code"]
        times: dict[int, list[float]] = {n: [] for n in SIZES}
        for i in range(args.runs + 2):
            for n, env in envs.items():
                started = time.perf_counter()
                done = subprocess.run(hook, input=stdin, capture_output=True, text=True, env=env, check=False)
                check_hook(done, Path(env["LORE_DATA_DIR"]))
                if i >= 2:
                    times[n].append((time.perf_counter() - started) * 1000)
        p50 = {n: statistics.median(ms) for n, ms in times.items()}
        p95 = {n: statistics.quantiles(ms, n=20, method="inclusive")[18] for n, ms in times.items()}
        ratio = p50[SIZES[1]] / p50[SIZES[0]]
        verdict = "**PASS**" if ratio <= TARGET else "**FAIL**"
        rows = "\n".join(f"| {n:,} | {p50[n]:.1f} | {p95[n]:.1f} |" for n in SIZES)
        section = f"""{SECTION}

`lore hook session-start --client claude-code` as a fresh process, {args.runs} interleaved runs
against each of two warm embedded PostgreSQL servers whose session space holds {SIZES[0]:,} and
{SIZES[1]:,} facts (both more than the 8,000-character budget shows). The facts are read group by group
from indexes in the order they are shown (migration 0008), at most 400, so only the count of what was
left out still grows with the space (an exact count: ~8 ms at 100,000).

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}

| facts in the space | hook p50 ms | hook p95 ms |
|---:|---:|---:|
{rows}

| target | measured | result |
|---|---|---|
| p50 at {SIZES[1]:,} ≤ {TARGET}x p50 at {SIZES[0]:,} | {ratio:.2f}x | {verdict} |

Rerun: `.venv/bin/python bench/hook_scaling.py --runs {args.runs} --write`
"""
        print(section)
        if args.write:
            replace_section(DOC, SECTION, section)
        return 0 if ratio <= TARGET else 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for env in envs.values():
            embedded.stop(env)
        shutil.rmtree(tmp, ignore_errors=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)


if __name__ == "__main__":
    sys.exit(main())
