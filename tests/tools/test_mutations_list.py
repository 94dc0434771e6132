"""The mutation check (scripts/mutations.py, `make mutations`) stays runnable: every snippet it
breaks is in its file exactly once, so moved code fails here, in `make test`, not half an hour into
a mutation run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_mutation_snippet_is_in_place() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/mutations.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every snippet is in place" in done.stdout + done.stderr
