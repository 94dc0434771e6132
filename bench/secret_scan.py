"""How long the secret scan takes per write: a 32 KB body (the largest note body a tool takes in one
part) of ordinary prose, and of prose with findings, scanned many times in one process.

Rerun: .venv/bin/python bench/secret_scan.py [--write]   (--write replaces its section of
docs/benchmarks.md)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from report import commit, machine, replace_section

from lore.core import secrets

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HEADING = "## Secret scan"
PROSE = "ordinary words about deploys, schemas and tests; the cache holds 15 minutes of tokens. "


def bodies() -> dict[str, str]:
    plain = (PROSE * 400)[:32_000]
    key = "AKIA" + "QWERTYUIOPASDFGH"  # an AWS key id shape, built here so no key sits in the file
    return {"32 KB prose": plain, "32 KB prose, one finding": plain[:16_000] + f" id {key} " + plain[16_000:]}


def measure(text: str, runs: int) -> list[float]:
    secrets.scan(text)  # compile and warm up
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        secrets.scan(text)
        times.append((time.perf_counter() - started) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = ["| body | runs | p50 ms | p95 ms | max ms |", "|---|---|---|---|---|"]
    for name, text in bodies().items():
        times = sorted(measure(text, args.runs))
        p95 = times[int(len(times) * 0.95) - 1]
        p50 = statistics.median(times)
        rows.append(f"| {name} | {args.runs} | {p50:.2f} | {p95:.2f} | {times[-1]:.2f} |")
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    text = "\n".join(
        [
            HEADING,
            "",
            f"`bench/secret_scan.py`, {when}, commit {commit()}; {machine()}. One process, "
            "`lore.secrets.scan` on one body per run (every write path scans what it stores).",
            "",
            *rows,
        ]
    )
    print(text)
    if args.write:
        replace_section(DOC, HEADING, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
