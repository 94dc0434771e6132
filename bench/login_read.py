"""What the hooks pay to find the server `lore login` stored (docs/design.md, Signing in a machine).

Measures, in this process, `lore.hooks.credentials.server(env)` (the one choice every hook makes) with
no login file and no LORE_URL (this machine's database), with a stored login, and with LORE_URL and
LORE_TOKEN set (what a hosted hook did before there was a login); then, in fresh interpreters, what
importing `lore.hooks.credentials` and `lore.core.login` adds to the hook's imports (`-X importtime`,
cumulative). Nothing is sent anywhere: the login names a closed port, and no hook is run.

Rerun:  .venv/bin/python bench/login_read.py [--calls 2000] [--imports 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lore.core import login
from lore.hooks import credentials

TOKEN = "lore_" + "a" * 43


def per_call(env: dict[str, str], calls: int) -> tuple[float, float]:
    """(median, p95) in microseconds of credentials.server(env)."""
    took = []
    for _ in range(calls):
        started = time.perf_counter()
        credentials.server(env)
        took.append(time.perf_counter() - started)
    took.sort()
    return statistics.median(took) * 1e6, took[int(len(took) * 0.95)] * 1e6


NEW = ("lore.core.login", "lore.hooks.credentials")


def import_cost(runs: int) -> float:
    """Median import time (ms) the two modules add to the session-start hook's imports: their own
    times (`-X importtime`, in fresh interpreters; everything else they import the hook had already)."""
    took = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import lore.hooks.session_start"],
            capture_output=True,
            text=True,
            check=True,
        )
        rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
        took.append(sum(int(r[0].split()[-1]) for r in rows if r[2].strip() in NEW) / 1000)
    return statistics.median(took)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--imports", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        none = {"HOME": str(base / "none"), "PATH": "/usr/bin"}
        stored = {"HOME": str(base / "stored"), "PATH": "/usr/bin"}
        login.write(stored, login.Login("http://127.0.0.1:9", "alice", TOKEN))
        env = {**none, "LORE_URL": "http://127.0.0.1:9", "LORE_TOKEN": TOKEN}
        for name, given in (
            ("no login, no LORE_URL", none),
            ("a stored login", stored),
            ("LORE_URL + LORE_TOKEN", env),
        ):
            median, p95 = per_call(given, args.calls)
            print(f"{name:<24} median {median:6.1f} us   p95 {p95:6.1f} us   ({args.calls:,} calls)")
    print(f"importing {' and '.join(NEW)} in the hook: median {import_cost(args.imports):.2f} ms")


if __name__ == "__main__":
    main()
