"""One memory on two machines, in the real Claude Code: "machine A" and "machine B" are two homes, each
signed in to one `lore serve --sign-in` with `lore login` and wired with `lore install claude-code`
(no LORE_URL, no LORE_TOKEN anywhere: the MCP entry asks `lore mcp-headers`, the hooks read the login).
What A stored, a fact from its terminal and the handoff of its Claude Code session, reaches the first
prompt of a Claude Code session on B, whose tools work over the server; neither machine gets a local
database."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from support.lorehttp import start_server, token, two_space_config
from support.machines import Machine, machine

from .claude import run_claude
from .mock_anthropic import MockAnthropic, requests_text, text_reply, tool_names, tool_use_reply

pytestmark = pytest.mark.e2e


def _set_up(computer: Machine, url: str, secret: str) -> None:
    computer.login(url, secret)
    installed = computer.program("install", "claude-code")
    assert installed.returncode == 0, installed.stderr
    entry = json.loads((computer.home / ".claude.json").read_text())["mcpServers"]["lore"]
    assert entry["headersHelper"].endswith("mcp-headers") and secret not in json.dumps(entry)


def _claude(
    computer: Machine, prompt: str, cwd: Path, mock: MockAnthropic, claude: Path, **kw: object
) -> None:
    shell = {
        "LORE_DATA_DIR": computer.env["LORE_DATA_DIR"],
        "LORE_CONFIG": computer.env["LORE_CONFIG"],
        "LORE_HOOK_DEADLINE": computer.env["LORE_HOOK_DEADLINE"],
        "PWD": str(cwd),  # Claude Code expands ${PWD} in the X-Lore-Workspace header
    }
    done = run_claude(
        prompt,
        cwd=cwd,
        home=computer.home,
        mock_url=mock.url,
        env_extra=shell,
        claude=claude,
        **kw,  # type: ignore[arg-type]
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_what_machine_a_stored_reaches_a_claude_code_session_on_machine_b(
    tmp_path: Path,
    lore_env: dict[str, str],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
) -> None:
    project = tmp_path / "proj"
    (project / "work").mkdir(parents=True)
    (project / "home").mkdir()
    secret = token(conn, "alice")
    server = start_server(lore_env, tmp_path / "serve.log", "--sign-in", process=True)
    try:
        laptop, desktop = machine(tmp_path, "machine-a"), machine(tmp_path, "machine-b")
        config = tmp_path / "config.toml"
        config.write_text(two_space_config(project))
        for computer in (laptop, desktop):
            _set_up(computer, server.url, secret)
        assert "Pushed" in laptop.ok("config", "push", str(config))
        laptop.ok("facts", "add", "FACT-FROM-A: releases are cut on Thursdays", cwd=project / "work")
        mock_api.script(text_reply("HANDOFF-FROM-A: the changelog is drafted; next, tag v2.3."))
        _claude(laptop, "draft the changelog", project / "work", mock_api, claude_cli)
        stored = conn.execute("SELECT space, message FROM handoffs").fetchall()
        assert len(stored) == 1 and stored[0][0] == "alice/work" and "HANDOFF-FROM-A" in stored[0][1]

        before = len(mock_api.main_messages())
        tool = "mcp__lore__remember_fact"
        mock_api.script(tool_use_reply(tool, {"statement": "FACT-FROM-B: v2.3 is tagged"}), text_reply("ok"))
        _claude(
            desktop, "what now?", project / "work", mock_api, claude_cli, extra_args=["--allowedTools", tool]
        )
        first = mock_api.main_messages()[before]
        seen = requests_text({"messages": first["messages"]})
        assert "FACT-FROM-A: releases are cut on Thursdays" in seen and "<lore-memory" in seen
        assert "Last session here: claude-code" in seen and "HANDOFF-FROM-A" in seen
        assert tool in tool_names(first)  # the MCP entry signed in with the login's token
        rows = conn.execute("SELECT space, source FROM facts WHERE statement LIKE 'FACT-FROM-B%'").fetchall()
        assert rows == [("alice/work", "claude-code")]
        assert "FACT-FROM-B: v2.3 is tagged" in laptop.ok("facts", "list", cwd=project / "work")
        assert laptop.untouched() and desktop.untouched()
        assert secret not in server.logs()
    finally:
        server.stop()
