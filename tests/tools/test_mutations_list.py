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


def test_the_table_names_a_test_without_its_parameters() -> None:
    """A parametrized test's id can hold what the test fed in (here a made-up database password);
    the table written into docs/reliability.md names the test only."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("mutations_script", ROOT / "scripts" / "mutations.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # dataclasses look their module up while the class is made
    spec.loader.exec_module(script)
    killed = script.Outcome(
        "killed", 1.0, "tests/unit/test_redact.py::test_masked[postgresql://app:Hx7-q9!Lm@db/lore]"
    )
    row = script.table([(script.Mutation("m", "a rule", "src/x.py", (), ()), killed)])
    assert "`tests/unit/test_redact.py::test_masked[…]`" in row and "Hx7" not in row
