"""The README's quick start, run once per test run on a fresh clone (support.quickstart): what
tests/tools/test_quickstart.py checks, and the wheel tests/tools/test_wheel.py installs."""

from __future__ import annotations

import os

import pytest
from support import quickstart as quick


@pytest.fixture(scope="session")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> quick.Outcome:
    """Run by whichever xdist worker asks first; the others read its outcome."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return quick.run(shared / "lore-quickstart")
