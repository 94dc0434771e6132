"""The soak's short version in CI: 8 concurrent `lore mcp` sessions mixing every tool for 6 s, then the
client-side ledger of acknowledged writes is checked against the database (bench/soak.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SOAK = Path(__file__).resolve().parents[2] / "bench" / "soak.py"


def test_short_soak_loses_nothing() -> None:
    done = subprocess.run(
        [sys.executable, str(SOAK), "--short"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "0 problems; orphan processes: 0; lore connections left: 0" in done.stdout, done.stdout
    assert "Traceback" not in done.stderr
