"""Shared by the benchmarks: the machine line, the commit measured, and replacing one section of
docs/benchmarks.md (from its `## ` heading to the next one), leaving every other section alone."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem = next(line for line in meminfo if line.startswith("MemTotal"))
        gib = int(mem.split()[1]) / 1024 / 1024
    except (OSError, StopIteration):
        gib = 0.0
    return f"{platform.platform()}, {os.cpu_count()} cores ({cpu}), {gib:.1f} GiB RAM"


def commit() -> str:
    """The short commit measured, marked when tracked files had uncommitted changes."""
    repo = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    return (git("rev-parse", "--short", "HEAD") or "unknown") + dirty


def replace_section(doc: Path, heading: str, text: str) -> None:
    lines = doc.read_text().splitlines() if doc.exists() else ["# lore benchmarks", ""]
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        lines = [*lines, "", *text.splitlines()]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines = [*lines[:start], *text.splitlines(), "", *lines[end:]]
    doc.write_text("\n".join(lines).rstrip() + "\n")
