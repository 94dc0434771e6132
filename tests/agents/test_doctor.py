"""`lore doctor` on each installed client: files present, pointing at an existing lore, the hook in
the shape that client reads, and when the hook last ran (from the hook log)."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from lore import installers
from lore.core import hooklog as log
from lore.installers import Check, Edits, Scope, codex, get, names

from .conftest import LORE


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(home), "LORE_DATA_DIR": str(tmp_path / "data")}


@pytest.fixture
def fake_lore(tmp_path: Path) -> Path:
    path = tmp_path / "venv" / "bin" / "lore"
    path.parent.mkdir(parents=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def install(client: str, home: Path, lore: Path, env: dict[str, str], project: Path | None = None) -> None:
    edits = Edits()
    get(client).install(Scope(home, project, env), str(lore), edits)
    edits.apply()


def doctor(home: Path, env: dict[str, str], cwd: Path | None = None) -> list[Check]:
    return installers.doctor(cwd or home, env)


def lines(checks: list[Check], client: str) -> list[tuple[str, str]]:
    return [(c.level, c.text) for c in checks if c.text.startswith(client)]


def test_nothing_installed_says_how(home: Path, env: dict[str, str]) -> None:
    assert doctor(home, env) == [
        Check(
            "WARN",
            "lore is not installed into any agent → `lore install CLIENT` "
            "(claude-code, gemini, codex, cursor, vscode, opencode, cline, copilot)",
        )
    ]


@pytest.mark.parametrize("client", names())
def test_an_installed_client_is_checked(
    client: str, home: Path, env: dict[str, str], fake_lore: Path
) -> None:
    install(client, home, fake_lore, env)
    mine = lines(doctor(home, env), client)
    assert mine, doctor(home, env)
    assert not [t for level, t in mine if level == "FAIL"], mine
    assert any(level == "OK" and str(fake_lore) in t for level, t in mine), mine
    assert any("no session-start hook run recorded yet" in t for _, t in mine), mine
    log.append(client, "session-start", True, "space alpha (path): 3 facts shown", env)
    assert any(level == "OK" and "hook last ran" in t for level, t in lines(doctor(home, env), client))
    log.append(client, "session-start", False, "DatabaseError: connection refused", env)
    assert any("failed: DatabaseError" in t for _, t in lines(doctor(home, env), client))


def test_copilot_without_its_hook_says_memory_is_missing(
    home: Path, env: dict[str, str], fake_lore: Path
) -> None:
    install("copilot", home, fake_lore, env)
    assert any("sessionStart hook →" in t for _, t in lines(doctor(home, env), "copilot"))
    (home / ".copilot" / "hooks" / "lore.json").unlink()
    warned = lines(doctor(home, env), "copilot")
    assert any(level == "WARN" and "no memory before the first prompt" in t for level, t in warned), warned


@pytest.mark.parametrize("client", names())
def test_a_lore_that_moved_away_fails(client: str, home: Path, env: dict[str, str], fake_lore: Path) -> None:
    install(client, home, fake_lore, env)
    fake_lore.unlink()
    failed = [t for level, t in lines(doctor(home, env), client) if level == "FAIL"]
    assert failed and all("does not exist" in t for t in failed), failed


def test_gemini_matcher_that_never_fires(home: Path, env: dict[str, str], fake_lore: Path) -> None:
    install("gemini", home, fake_lore, env)
    path = home / ".gemini" / "settings.json"
    settings = json.loads(path.read_text())
    settings["hooks"]["SessionStart"][0]["matcher"] = "startup|clear"
    path.write_text(json.dumps(settings))
    assert any(level == "FAIL" and "matcher" in t for level, t in lines(doctor(home, env), "gemini"))


def test_cursor_hooks_without_version(home: Path, env: dict[str, str], fake_lore: Path) -> None:
    install("cursor", home, fake_lore, env)
    path = home / ".cursor" / "hooks.json"
    hooks = json.loads(path.read_text())
    del hooks["version"]
    path.write_text(json.dumps(hooks))
    assert any(level == "FAIL" and '"version": 1' in t for level, t in lines(doctor(home, env), "cursor"))


def test_codex_hook_trust_is_read_from_codex_state(home: Path, env: dict[str, str], fake_lore: Path) -> None:
    install("codex", home, fake_lore, env)
    warned = lines(doctor(home, env), "codex")
    assert any(level == "WARN" and "not trusted lore's hook yet" in t for level, t in warned), warned
    config = home / ".codex" / "config.toml"
    hooks_json = home / ".codex" / "hooks.json"
    key = f"{hooks_json}:session_start:0:0"  # what Codex 0.171 records when the user trusts the hook
    config.write_text(config.read_text() + f'\n[hooks.state."{key}"]\ntrusted_hash = "sha256:00"\n')
    assert any(level == "OK" and "is trusted" in t for level, t in lines(doctor(home, env), "codex"))
    config.write_text(config.read_text() + "\n[features]\nhooks = false\n")
    assert any(level == "FAIL" and "hooks = false" in t for level, t in lines(doctor(home, env), "codex"))


def test_codex_project_needs_a_trusted_folder(
    tmp_path: Path, home: Path, env: dict[str, str], fake_lore: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    install("codex", home, fake_lore, env, repo)
    project_lines = [c for c in doctor(home, env, repo) if f"project {repo}" in c.text]
    assert any("trusted project" in c.text for c in project_lines), project_lines
    assert codex.paths(Scope(home, repo))[0] == repo / ".codex" / "config.toml"


def test_cline_hook_that_is_not_executable(home: Path, env: dict[str, str], fake_lore: Path) -> None:
    install("cline", home, fake_lore, env)
    script = home / "Documents" / "Cline" / "Hooks" / "TaskStart"
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    checks = lines(doctor(home, env), "cline")
    assert any(level == "FAIL" and "not executable" in t for level, t in checks), checks
    assert any("usually default_space" in t for _, t in checks)  # Cline's missing signal is said


def test_project_files_are_checked_from_inside_the_repository(
    tmp_path: Path, home: Path, env: dict[str, str], fake_lore: Path
) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    install("cursor", home, fake_lore, env, repo)
    checks = doctor(home, env, repo / "src")
    assert any(c.level == "OK" and f"cursor (project {repo})" in c.text for c in checks), checks
    assert not any("(user)" in c.text for c in checks)


def test_lore_doctor_prints_the_client_checks(lore_env: dict[str, str]) -> None:
    home = lore_env["HOME"]
    for args in (["install", "gemini"], ["doctor"]):
        done = subprocess.run(
            [LORE, *args], cwd=home, env=lore_env, capture_output=True, text=True, timeout=60
        )
        assert args == ["doctor"] or done.returncode == 0, done.stderr
    assert (
        f"OK   gemini (user) MCP server in {lore_env['HOME']}/.gemini/settings.json → {LORE}" in done.stdout
    )
    # The hook log is the test worker's (shared with the agent tests): another test's gemini session
    # may have run first.
    out = done.stdout
    assert "gemini: no session-start hook run recorded yet" in out or "gemini: hook last ran" in out
    assert "gemini: no session-end hook run recorded yet" in out or "gemini: session-end hook last ran" in out
