"""The README's two set-up commands as make would run them (`make -n -B`: every step, none run):
`make run` installs lore and its runtime dependencies only; `make test` adds the dev extras."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _steps(target: str) -> list[str]:
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.replace("\\\n", " ").splitlines()  # a continued line is one command


def test_make_run_installs_the_runtime_only() -> None:
    steps = _steps("run")
    installs = [s for s in steps if "pip install" in s]
    assert any(s.endswith("pip install --quiet -e .") for s in installs), installs
    assert not [s for s in installs if "[" in s], installs  # no extras: no pytest, ruff, mypy, playwright
    assert steps[-1].endswith("lore run")


def test_make_test_installs_the_dev_extras_and_runs_the_readme_command() -> None:
    steps = _steps("test")
    assert any(s.endswith("pip install --quiet -e '.[dev]'") for s in steps), steps
    runner = [s for s in steps if s.startswith("scripts/test.sh ")]
    assert runner, steps
    # scripts/test.sh: the suite, and beside it lint + types and the older-PostgreSQL run, all counted
    script = (ROOT / "scripts" / "test.sh").read_text()
    assert '"$bin/python" -m pytest -n "$workers"' in script
    assert "make --no-print-directory lint typecheck" in script
    assert "LORE_TEST_POSTGRES=16" in script and 'exit "$status"' in script


def test_make_quick_runs_the_core_tests_only() -> None:
    """`make quick` (between edits) selects by marker (tests/support/kinds.py): unit and integration,
    no infrastructure of its own, nothing slow by design; no folder list to keep in step."""
    steps = _steps("quick")
    runner = [s for s in steps if " -m pytest " in s]
    assert len(runner) == 1, steps
    assert '-m "(unit or integration) and not infra and not slow"' in runner[0], runner
    assert not [a for a in runner[0].split() if a.startswith(("tests/", "--ignore"))], runner
    unit = [s for s in _steps("unit") if " -m pytest " in s]
    assert len(unit) == 1 and unit[0].endswith("-m unit"), unit


def test_make_test_prints_the_25_slowest_tests() -> None:
    assert "--durations=25" in (ROOT / "scripts" / "test.sh").read_text()
