"""Shared by the retrieval benchmarks: the machine line and replacing one section of
docs/benchmarks.md (from its `## ` heading to the next one), leaving every other section alone."""

from __future__ import annotations

import os
import platform
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


def replace_section(doc: Path, heading: str, text: str) -> None:
    lines = doc.read_text().splitlines() if doc.exists() else ["# lore benchmarks", ""]
    start = next((i for i, line in enumerate(lines) if line.strip() == heading), None)
    if start is None:
        lines = [*lines, "", *text.splitlines()]
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines = [*lines[:start], *text.splitlines(), "", *lines[end:]]
    doc.write_text("\n".join(lines).rstrip() + "\n")
