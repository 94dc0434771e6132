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
import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

_base: str | None = None
# A benchmark's child process (month_six.py's baseline run) uses its parent's base: the parent
# keeps the child's database running after the child exits, and removes the base at its own exit.
INHERITED = "LORE_BENCH_ROOT_BASE"


def root_base() -> str:
    """This run's root base (made on the first call, 0755 as /var/lib/lore is: the server's user
    must pass through it), or the parent benchmark's."""
    global _base
    if _base is None:
        _base = os.environ.get(INHERITED)
        if _base is None:
            _base = tempfile.mkdtemp(prefix="lore-bench-root-", dir="/tmp")
            os.chmod(_base, 0o755)
            atexit.register(_remove, _base)
        os.environ["LORE_ROOT_BASE"] = os.environ[INHERITED] = _base  # this process and its children
    return _base


def _remove(base: str) -> None:
    from lore.db import embedded

    for pgdata in Path(base).glob("embedded/*/pg"):
        with contextlib.suppress(Exception):  # one that will not stop must not keep the others
            embedded._stop_locked(pgdata, timeout=10)
    shutil.rmtree(base, ignore_errors=True)


def keep_root_base() -> None:
    """Leave this run's root base, and the clusters under it, where they are (a benchmark's --keep)."""
    if _base is not None:
        atexit.unregister(_remove)
        print(f"kept the root base {_base}", file=sys.stderr)
