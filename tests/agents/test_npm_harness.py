"""The e2e harness fails (never skips) when an agent CLI cannot be installed, and says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import npm


def test_no_npm_is_a_failure_with_the_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LORE_TEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(npm.NpmInstallError, match="npm is not on PATH: cannot install @google/gemini-cli"):
        npm.ensure(npm.GEMINI)


def test_an_unreachable_registry_is_a_failure_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LORE_TEST_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    monkeypatch.setenv("npm_config_fetch_retries", "0")
    monkeypatch.setenv("npm_config_cache", str(tmp_path / "npm-cache"))
    with pytest.raises(npm.NpmInstallError, match="is the npm registry reachable"):
        npm.ensure(npm.CODEX)
