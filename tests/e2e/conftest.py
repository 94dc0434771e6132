"""Fixtures for e2e tests: the pinned Claude Code CLI, a mock Anthropic API, isolated dirs."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .claude import ensure_claude_cli
from .mock_anthropic import MockAnthropic


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    """The pinned ``claude`` binary; installing it fails the test (never skips) when npm cannot."""
    return ensure_claude_cli()


@pytest.fixture(scope="session")
def e2e_python() -> str:
    """Python that runs test MCP servers (needs the ``mcp`` SDK): ``$LORE_E2E_PYTHON`` or this one."""
    return os.environ.get("LORE_E2E_PYTHON") or sys.executable


@pytest.fixture
def mock_api() -> Iterator[MockAnthropic]:
    with MockAnthropic() as mock:
        yield mock


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    home = tmp_path / "claude-home"
    home.mkdir()
    return home


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work
