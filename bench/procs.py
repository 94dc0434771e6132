"""What the benchmarks read about the processes they start: CPU time and resident memory, from
/proc. (Stopping one: tests/support/lorehttp.py's stop_process.)"""

from __future__ import annotations

import os


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU time of a process, in seconds (NaN once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


def rss_mb(pid: int | str = "self") -> float:
    """Resident memory of a process, in MB (NaN once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
        return kb / 1024
    except (OSError, StopIteration):
        return float("nan")


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its children: the live ones' own, and what the ones it already
    reaped used (a PostgreSQL postmaster and its backends)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        total = sum(int(fields[i]) for i in (11, 12, 13, 14)) / tick
    except (OSError, IndexError, ValueError):
        return float("nan")
    for child in _children(pid):
        total += tree_cpu_seconds(child)
    return total


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []
