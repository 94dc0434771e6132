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
