"""Prove the e2e harness against the real Claude Code CLI with a throwaway plugin (not lore)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .claude import result_json, run_claude, write_plugin
from .mock_anthropic import (
    MockAnthropic,
    requests_text,
    text_reply,
    tool_names,
    tool_result_text,
    tool_results,
    tool_use_reply,
)

pytestmark = pytest.mark.e2e

FIXTURES = Path(__file__).parent / "fixtures"


def _assert_served(mock: MockAnthropic) -> None:
    assert not mock.unknown, f"Claude Code called endpoints the mock does not serve: {mock.unknown}"
    assert mock.main_messages(), "no main conversation request reached the mock"


def test_nested_session_start_context_reaches_model(
    tmp_path: Path, claude_cli: Path, mock_api: MockAnthropic, claude_home: Path, workdir: Path
) -> None:
    payload = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "MARKER-123"}}
    plugin = write_plugin(tmp_path / "plugin", "probe", session_start_stdout=json.dumps(payload))

    cp = run_claude(
        "hello", cwd=workdir, home=claude_home, mock_url=mock_api.url, plugin_dir=plugin, claude=claude_cli
    )

    assert cp.returncode == 0, cp.stderr
    assert result_json(cp)["result"] == "ok"
    _assert_served(mock_api)
    stdin = json.loads((plugin / "hook-stdin.json").read_text())
    assert stdin["hook_event_name"] == "SessionStart"
    assert stdin["source"] == "startup"
    assert Path(stdin["cwd"]).resolve() == workdir.resolve()

    first = mock_api.main_messages()[0]
    assert "MARKER-123" in requests_text(first)
    # Where it lands: not in the system prompt, but in a turn after the first user message.
    assert "MARKER-123" not in requests_text({"system": first["system"]})
    texts = [requests_text({"messages": [m]}) for m in first["messages"]]
    carriers = [i for i, text in enumerate(texts) if "MARKER-123" in text]
    assert carriers and carriers[0] > 0
    # Claude Code 2.1.332: messages[1] is a role "system" turn whose first text block starts with
    # "SessionStart hook additional context: MARKER-123" (plain stdout reads "SessionStart:startup hook
    # success: ..."), followed by the "# Environment" section.
    carrier = first["messages"][carriers[0]]
    assert carrier["role"] == "system"
    assert texts[carriers[0]].startswith("SessionStart hook additional context: MARKER-123")
    assert first["messages"][0]["role"] == "user"
    assert "hello" in texts[0]


def test_flat_session_start_context_is_silently_dropped(
    tmp_path: Path, claude_cli: Path, mock_api: MockAnthropic, claude_home: Path, workdir: Path
) -> None:
    """Pins the known client bug: flat ``{"additionalContext": ...}`` is valid JSON but never arrives."""
    plugin = write_plugin(
        tmp_path / "plugin", "probe", session_start_stdout=json.dumps({"additionalContext": "FLAT-456"})
    )

    cp = run_claude(
        "hello", cwd=workdir, home=claude_home, mock_url=mock_api.url, plugin_dir=plugin, claude=claude_cli
    )

    assert cp.returncode == 0, cp.stderr
    _assert_served(mock_api)
    assert (plugin / "hook-stdin.json").exists(), "the hook did not run, so the negative proves nothing"
    for request in mock_api.requests:
        assert b"FLAT-456" not in request.raw
        assert "FLAT-456" not in requests_text(request)


def test_plugin_mcp_tool_roundtrip(
    tmp_path: Path,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
    workdir: Path,
    e2e_python: str,
) -> None:
    plugin = tmp_path / "plugin"
    write_plugin(
        plugin,
        "probe",
        mcp_servers={"pinger": {"command": e2e_python, "args": ["${CLAUDE_PLUGIN_ROOT}/ping_server.py"]}},
    )
    shutil.copy(FIXTURES / "ping_server.py", plugin / "ping_server.py")
    tool = "mcp__plugin_probe_pinger__ping"
    mock_api.script(tool_use_reply(tool, {"message": "hi"}), text_reply("done"))

    cp = run_claude(
        "ping the server",
        cwd=workdir,
        home=claude_home,
        mock_url=mock_api.url,
        plugin_dir=plugin,
        extra_args=["--allowedTools", tool],
        claude=claude_cli,
    )

    assert cp.returncode == 0, cp.stderr
    _assert_served(mock_api)
    main = mock_api.main_messages()
    assert tool in tool_names(main[0]), tool_names(main[0])
    assert mock_api.pending == 0
    assert len(main) >= 2
    results = tool_results(main[1])
    assert len(results) == 1
    assert not results[0].get("is_error"), results[0]
    text = tool_result_text(results[0])
    assert "PONG-789 hi" in text
    assert "PONG-789 hi" in requests_text(main[1])
    assert f"cwd={workdir.resolve()}" in text  # a stdio server starts in the launch directory
    assert result_json(cp)["result"] == "done"
