"""The Claude Code plugin ships the `memory-researcher` subagent, and the real CLI exposes it.

Claude Code 2.1.332 (seen here): `claude --plugin-dir DIR plugin details NAME` prints the plugin's
component inventory; in a session, plugin agents are listed to the model as `<plugin>:<agent>` in a
system message, and the `Agent` tool (`subagent_type`) starts one, here in the background, with a
request of its own that carries only the tools its frontmatter names.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e.claude import claude_env, run_claude
from e2e.mock_anthropic import MockAnthropic, requests_text, text_reply, tool_names, tool_use_reply

from .conftest import VENV_BIN, Project

pytestmark = pytest.mark.e2e

PLUGIN = Path(__file__).resolve().parents[2] / "plugin"
AGENT = "lore:memory-researcher"
TOOLS = {f"mcp__plugin_lore_lore__{t}" for t in ("search_notes", "recall_facts", "mark_irrelevant")}


def _is_subagent(body: dict[str, Any]) -> bool:
    return "cc_is_subagent=true" in requests_text({"system": body.get("system")})


def test_plugin_details_lists_the_agent(claude_cli: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [str(claude_cli), "--plugin-dir", str(PLUGIN), "plugin", "details", "lore"],
        env=claude_env(home, "http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    agents = next(line for line in done.stdout.splitlines() if line.strip().startswith("Agents"))
    assert "(1)" in agents and "memory-researcher" in agents, done.stdout


def test_the_agent_is_offered_and_runs_with_only_lores_search_tools(
    claude_cli: Path, project: Project, tmp_path: Path
) -> None:
    env = {**project.env, "PATH": f"{VENV_BIN}:{project.env['PATH']}"}
    with MockAnthropic(is_main=lambda body: bool(body.get("tools")) and not _is_subagent(body)) as mock:
        call = {
            "subagent_type": AGENT,
            "description": "find how we deploy",
            "prompt": "How does acme-api deploy?",
        }
        mock.script(tool_use_reply("Agent", call), text_reply("done"))
        done = run_claude(
            "how do we deploy?",
            cwd=project.root,
            home=project.home,
            mock_url=mock.url,
            plugin_dir=PLUGIN,
            env_extra=env,
            claude=claude_cli,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        first = mock.main_messages()[0]
        assert f"- {AGENT}: Searches lore" in requests_text(first)
        assert "Agent" in tool_names(first)
        subagent = [b for b in mock.messages() if _is_subagent(b)]
        assert subagent, "the subagent never sent a request"
        assert set(tool_names(subagent[0])) == TOOLS
        system = requests_text({"system": subagent[0]["system"]})
        assert "You research lore" in system and "mark_irrelevant" in system
        assert "How does acme-api deploy?" in json.dumps(subagent[0]["messages"])
