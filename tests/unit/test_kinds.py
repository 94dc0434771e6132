"""Every test has one kind, by its folder (support.kinds; tests/conftest.py applies the markers and
the Makefile selects by them), and every marker it uses is registered (pytest runs with
--strict-markers)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from support import kinds

ROOT = Path(__file__).resolve().parents[2]


def test_every_folder_of_tests_has_a_kind_and_every_listed_file_exists() -> None:
    folders = {p.parent.name for p in (ROOT / "tests").glob("*/test_*.py")}
    assert folders == set(kinds.KINDS), folders ^ set(kinds.KINDS)
    for listed in kinds.INFRA | kinds.SLOW:
        assert (ROOT / listed).is_file(), f"{listed} is marked but does not exist"


def test_the_markers_of_a_file() -> None:
    assert kinds.markers("tests/unit/test_kinds.py") == ["unit"]
    assert kinds.markers("tests/work/test_tasks.py") == ["integration"]
    assert kinds.markers("tests/integration/test_embedded.py") == ["integration", "infra"]
    assert kinds.markers("tests/tools/test_quickstart.py") == ["integration", "slow"]
    assert kinds.markers("tests/http/test_team.py") == ["http", "infra"]
    with pytest.raises(LookupError, match="add the folder to KINDS"):
        kinds.markers("tests/elsewhere/test_x.py")


def test_every_marker_is_registered() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":", 1)[0] for line in config["markers"]}
    assert registered >= kinds.MARKERS, kinds.MARKERS - registered
    assert "--strict-markers" in config["addopts"]
