"""Hosted mode in the real Claude Code: `lore install claude-code --server URL` against a
`lore serve --sign-in`; the token only in the environment. Memory and tools arrive over HTTP, and
another user's memory of the same directory never does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx2
import psycopg
import pytest
from support import envelope
from support.lorehttp import push, start_server, token, two_space_config

from .claude import run_claude
from .mock_anthropic import MockAnthropic, requests_text, text_reply, tool_names, tool_use_reply

pytestmark = pytest.mark.e2e
LORE = str(Path(sys.executable).parent / "lore")


def test_hosted_install_brings_memory_and_tools_over_http(
    tmp_path: Path,
    lore_env: dict[str, str],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
) -> None:
    base = tmp_path / "proj"
    (base / "work").mkdir(parents=True)
    (base / "home").mkdir()
    push(conn, "alice", two_space_config(base))
    push(conn, "bob", two_space_config(base))
    alice, bob = token(conn, "alice"), token(conn, "bob")
    server = start_server(lore_env, tmp_path / "serve.log", "--sign-in", process=True)
    try:
        # each user writes a fact about the same directory, through the JSON API
        for secret, statement in [(alice, "ALICE deploys on tuesdays"), (bob, "BOB-ONLY")]:
            resp = httpx2.post(
                f"{server.url}/api/facts",
                headers={"Authorization": f"Bearer {secret}", "X-Lore-Workspace": str(base / "work")},
                json={"statement": statement},
                timeout=30,
            )
            assert resp.status_code == 201, resp.text

        env = {
            "PATH": lore_env["PATH"],
            "LORE_DATA_DIR": lore_env["LORE_DATA_DIR"],
            "LORE_TOKEN": alice,
            "LORE_HOOK_DEADLINE": lore_env["LORE_HOOK_DEADLINE"],  # 0.9 s failed open under load
        }
        installed = subprocess.run(
            [LORE, "install", "claude-code", "--server", server.url],
            env={**env, "HOME": str(claude_home)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert installed.returncode == 0, installed.stderr
        assert alice not in (claude_home / ".claude.json").read_text()  # the token stays in the env
        tool = "mcp__lore__remember_fact"
        mock_api.script(tool_use_reply(tool, {"statement": "written by claude over http"}), text_reply("ok"))
        # A shell exports PWD; Claude Code expands ${PWD} in the X-Lore-Workspace header. (Over HTTP
        # it answers no roots/list: the 2026 transport has no back-channel there, so the header is it.)
        shell = {**env, "PWD": str(base / "work")}
        cp = run_claude(
            "hello",
            cwd=base / "work",
            home=claude_home,
            mock_url=mock_api.url,
            env_extra=shell,
            extra_args=["--allowedTools", tool],
            claude=claude_cli,
        )
        assert cp.returncode == 0, cp.stderr[-2000:]
        first = mock_api.main_messages()[0]
        text = requests_text({"messages": first["messages"]})
        assert "ALICE deploys on tuesdays" in text and "<lore-memory" in text
        assert "BOB-ONLY" not in text
        assert tool in tool_names(first)
        row = conn.execute("SELECT space, source FROM facts WHERE statement = 'written by claude over http'")
        assert row.fetchall() == [("alice/work", "claude-code")]
        assert alice not in server.logs()
    finally:
        server.stop()


def test_hosted_hooks_carry_the_handoff_to_the_next_session_and_a_message_to_the_next_prompt(
    tmp_path: Path,
    lore_env: dict[str, str],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
) -> None:
    """`lore install claude-code --server` installs every hook (SessionStart, UserPromptSubmit, Stop,
    SessionEnd), and each asks the server: the first session's handoff is on the server and leads the
    second session's memory; a message filed into the space in between arrives with the next prompt.
    No local config, no local database is used for any of it."""
    base = tmp_path / "proj"
    (base / "work").mkdir(parents=True)
    (base / "home").mkdir()
    push(conn, "alice", two_space_config(base))
    alice = token(conn, "alice")
    server = start_server(lore_env, tmp_path / "serve.log", "--sign-in", process=True)
    try:
        env = {
            "PATH": lore_env["PATH"],
            "LORE_DATA_DIR": str(tmp_path / "client-data"),  # this machine's: no database in it
            "LORE_CONFIG": str(tmp_path / "no-config.toml"),
            "LORE_TOKEN": alice,
            "LORE_HOOK_DEADLINE": lore_env["LORE_HOOK_DEADLINE"],
        }
        installed = subprocess.run(
            [LORE, "install", "claude-code", "--server", server.url],
            env={**env, "HOME": str(claude_home)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert installed.returncode == 0, installed.stderr
        settings = (claude_home / ".claude" / "settings.json").read_text()
        for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
            assert f'"{event}"' in settings and f"LORE_URL={server.url}" in settings, event

        shell = {**env, "PWD": str(base / "work")}
        mock_api.script(text_reply("HANDOFF-MARKER: the migration is half done; next, backfill."))
        first = run_claude(
            "start the migration",
            cwd=base / "work",
            home=claude_home,
            mock_url=mock_api.url,
            env_extra=shell,
            claude=claude_cli,
        )
        assert first.returncode == 0, first.stderr[-2000:]
        stored = conn.execute("SELECT space, client, message FROM handoffs").fetchall()
        assert [(s, c) for s, c, _ in stored] == [("alice/work", "claude-code")]
        assert "HANDOFF-MARKER" in stored[0][2]

        # Another of alice's spaces leaves a message for work (work accepts from home).
        conn.execute(
            "INSERT INTO messages (thread, to_space, from_space, body, source)"
            " VALUES (1, 'alice/work', 'alice/home', 'MESSAGE-MARKER: the staging DB is back', 'codex')"
        )
        conn.commit()
        before = len(mock_api.main_messages())
        mock_api.script(text_reply("ok"))
        second = run_claude(
            "what now?",
            cwd=base / "work",
            home=claude_home,
            mock_url=mock_api.url,
            env_extra=shell,
            claude=claude_cli,
        )
        assert second.returncode == 0, second.stderr[-2000:]
        seen = requests_text({"messages": mock_api.main_messages()[before]["messages"]})
        assert "Last session here: claude-code" in seen and "HANDOFF-MARKER" in seen
        assert envelope.any_opening(seen, envelope.INBOX, space="alice/work") and "MESSAGE-MARKER" in seen
        kinds = conn.execute("SELECT kind, outcome FROM injections ORDER BY id").fetchall()
        assert ("session-start", "shown") in kinds and ("prompt", "shown") in kinds
        assert not (tmp_path / "client-data" / "pg").exists()  # no local database was made
    finally:
        server.stop()
