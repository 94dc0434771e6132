"""Handoffs between real agent CLIs (docs/design.md, Handoffs), each against its local mock model API:
one agent's session ends with a marker in its final message; the next session of ANOTHER agent in the
same workspace has it in front of its first prompt ("Last session here"), and a session in another
space does not.

Findings (seen here): Claude Code 2.1.332 runs `Stop` (with `last_assistant_message`) and then
`SessionEnd` (`reason: "other"`, no message: lore reads the transcript) in `-p` mode; Codex 0.171.0
runs `Stop` (with `last_assistant_message`) and `SessionEnd` (its timeout clamped to 3 s) in `codex
exec`; Gemini CLI 0.61.0 runs `AfterAgent` (`prompt_response`) and `SessionEnd` (`reason: "exit"`,
not waited for) in `-p` mode; OpenCode 1.18.33 emits `session.idle` and exits at once in `opencode
run`, so lore's plugin runs the hook detached (it finishes after OpenCode is gone).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from e2e.claude import result_json, run_claude
from e2e.mock_anthropic import MockAnthropic, text_reply

from .conftest import LORE, Project, lore, run_agent
from .mocks.base import text
from .mocks.chat import MockChat
from .mocks.gemini import MockGemini
from .mocks.responses import MockResponses
from .test_codex_cli import _codex, _user_config
from .test_gemini_cli import _hook_context, _settings
from .test_opencode_cli import QUIET
from .test_opencode_cli import _user_config as _opencode_config

pytestmark = pytest.mark.e2e


def _git_with_changes(root: Path) -> None:
    """The project as a git repository with one changed and one new file (what a handoff counts)."""
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.test"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "app.py").write_text("print(1)\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    (root / "app.py").write_text("print(2)\n")
    (root / "notes.txt").write_text("new")


def _gemini_first_turn(cli: Path, project: Project, cwd: Path) -> str:
    """A Gemini CLI session in `cwd`: the text of its first user turn as the model received it."""
    env = {
        **project.env,
        "GEMINI_API_KEY": "dummy-key",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    with MockGemini() as mock:
        env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        done = run_agent([str(cli), "-p", "hello", "--output-format", "json"], cwd=cwd, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        first = mock.main_requests()[0]
    try:
        return _hook_context(first)
    except AssertionError:
        return ""  # no <hook_context>: nothing was injected


def _doctor(project: Project) -> str:
    done = subprocess.run(
        [LORE, "doctor"], cwd=project.root, env=project.env, capture_output=True, text=True, timeout=60
    )
    return done.stdout


def _handoffs(conn: psycopg.Connection) -> list[tuple[str, str, str | None, int]]:
    conn.rollback()
    rows = conn.execute("SELECT client, space, message, changed FROM handoffs ORDER BY id").fetchall()
    return [(str(r[0]), str(r[1]), r[2], int(r[3])) for r in rows]


def test_claude_code_hands_off_to_gemini_in_the_same_workspace_only(
    project: Project, conn: psycopg.Connection, claude_cli: Path, gemini_cli: Path
) -> None:
    _git_with_changes(project.root)
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    assert "Stop and SessionEnd hooks (handoff)" in lore(project, "install", "claude-code").stdout
    _settings(project.home)
    assert "AfterAgent and SessionEnd hooks (handoff)" in lore(project, "install", "gemini").stdout

    marker = "HANDOFF-MARKER-7f3a: the login redirect is fixed; the logout page is next."
    with MockAnthropic() as mock:
        mock.script(text_reply(f"{marker}\nI left the failing test in tests/test_logout.py."))
        done = run_claude(
            "fix the login",
            cwd=project.root,
            home=project.home,
            mock_url=mock.url,
            env_extra=project.env,
            claude=claude_cli,
        )
        assert done.returncode == 0 and not result_json(done).get("is_error"), done.stderr[-2000:]

    rows = _handoffs(conn)
    assert [(c, s, n) for c, s, _, n in rows] == [("claude-code", "alpha", 2)], rows
    assert rows[0][2] is not None and rows[0][2].startswith(marker)
    assert conn.execute("SELECT events, event FROM handoffs").fetchone() == (
        2,
        "SessionEnd",
    )  # Stop, then SessionEnd

    here = _gemini_first_turn(gemini_cli, project, project.root)
    assert "Last session here: claude-code, just now" in here and marker in here
    assert "2 changed files" in here
    assert here.index("Last session here") < here.index("acme-api deploys with make ship")

    elsewhere = _gemini_first_turn(gemini_cli, project, project.other)
    assert "HANDOFF-MARKER" not in elsewhere and "Last session here" not in elsewhere

    out = _doctor(project)
    assert "claude-code: session-end hook last ran" in out and "gemini: session-end hook last ran" in out


def test_codex_hands_off_to_gemini_in_the_same_workspace_only(
    project: Project, conn: psycopg.Connection, codex_cli: Path, gemini_cli: Path
) -> None:
    marker = "HANDOFF-MARKER-c0d3: migrated the users table; backfill still to run."
    with MockResponses() as mock:
        _user_config(project, mock)
        assert "Stop and SessionEnd hooks (handoff)" in lore(project, "install", "codex").stdout
        mock.script(text(marker))
        _codex(codex_cli, project, "--dangerously-bypass-hook-trust", prompt="migrate")
    rows = _handoffs(conn)
    assert [(c, s, m) for c, s, m, _ in rows] == [("codex", "alpha", marker)], rows

    _settings(project.home)
    lore(project, "install", "gemini")
    here = _gemini_first_turn(gemini_cli, project, project.root)
    assert "Last session here: codex" in here and marker in here
    assert marker not in _gemini_first_turn(gemini_cli, project, project.other)


def test_opencode_leaves_a_handoff_when_its_session_goes_idle(
    project: Project, conn: psycopg.Connection, opencode_cli: Path, opencode_plugin_package: Path
) -> None:
    marker = "HANDOFF-MARKER-0pen: the parser handles nested lists now."
    with MockChat() as mock:
        _opencode_config(project, mock, opencode_plugin_package)
        lore(project, "install", "opencode")
        mock.script(text(marker))
        done = run_agent([str(opencode_cli), "run", "go"], cwd=project.root, env={**project.env, **QUIET})
        assert done.returncode == 0, done.stderr[-3000:]
    deadline = time.monotonic() + 10  # the plugin's hook runs detached: it may finish after OpenCode
    while time.monotonic() < deadline and not _handoffs(conn):
        time.sleep(0.1)
    rows = _handoffs(conn)
    assert [(c, s, m) for c, s, m, _ in rows] == [("opencode", "alpha", marker)], rows
    log = (Path(project.env["LORE_DATA_DIR"]) / "logs" / "hook.log").read_text().splitlines()
    ends = [json.loads(x) for x in log if '"session-end"' in x and '"opencode"' in x]
    assert ends and ends[-1]["ok"] and "session.idle" in ends[-1]["detail"]
