"""Where a benchmark's embedded PostgreSQL lives when the benchmark runs as root.

As root, lore puts a cluster whose data directory the server's own user cannot reach (a
`tempfile.mkdtemp` directory is 0700) under a root base, /var/lib/lore by default, and removing the
benchmark's temporary directory leaves it there: every run as root left one behind. A benchmark
passes `root_base()` as LORE_ROOT_BASE in every environment it builds (the benchmark's own process
and the `lore` commands it starts must agree on it, or they would each start a cluster): one
temporary base per run, removed when the benchmark exits, after any cluster still running under it
is stopped."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

# A benchmark's child process (month_six.py's baseline run) uses its parent's base: the parent
# keeps the child's database running after the child exits, and removes the base at its own exit.
INHERITED = "LORE_BENCH_ROOT_BASE"


def root_base() -> str:
    """This run's root base (made on the first call, 0755 as /var/lib/lore is: the server's user
    must pass through it), or the parent benchmark's."""
    base = os.environ.get(INHERITED)
    if base is None:
        base = tempfile.mkdtemp(prefix="lore-bench-root-", dir="/tmp")
        os.chmod(base, 0o755)
        atexit.register(_remove, base)
        os.environ[INHERITED] = base  # for the benchmark's children
    os.environ["LORE_ROOT_BASE"] = base  # for what the benchmark starts in its own process
    return base


def _remove(base: str) -> None:
    from lore.db import embedded

    embedded.stop_under(Path(base))
    shutil.rmtree(base, ignore_errors=True)


def keep_root_base() -> None:
    """Leave this run's root base, and the clusters under it, where they are (a benchmark's --keep)."""
    atexit.unregister(_remove)
    print(f"kept the root base {os.environ.get(INHERITED)}", file=sys.stderr)
