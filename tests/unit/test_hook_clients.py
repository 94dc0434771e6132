"""Per-client hook input and output shapes (SPEC §5, §11), pinned."""

from __future__ import annotations

import json

import pytest

from lore.hooks import clients


def test_claude_code_shape_is_nested_never_flat() -> None:
    out = json.loads(clients.client("claude-code").shape("MEMORY"))
    assert out == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "MEMORY"}}
    assert "additionalContext" not in out


@pytest.mark.parametrize("name", ["gemini", "codex", "vscode"])
def test_nested_clients(name: str) -> None:
    assert json.loads(clients.client(name).shape("M"))["hookSpecificOutput"]["additionalContext"] == "M"


def test_other_shapes() -> None:
    assert json.loads(clients.client("cursor").shape("M")) == {"additional_context": "M"}
    assert json.loads(clients.client("cline").shape("M")) == {"contextModification": "M"}
    assert clients.client("opencode").shape("M") == "M"
    assert clients.client("copilot").injects is False


def test_unknown_client_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="known: claude-code, cline, codex"):
        clients.client("emacs")


def test_parse_input_cwd_and_cursor_roots() -> None:
    claude = clients.parse_input(
        '{"session_id":"s","cwd":"/p","hook_event_name":"SessionStart","source":"clear"}'
    )
    assert claude == clients.HookInput("/p", "clear")
    cursor = clients.parse_input('{"workspace_roots": ["/w", "/x"], "hook_event_name": "sessionStart"}')
    assert cursor == clients.HookInput("/w", None)
    assert clients.parse_input("") == clients.HookInput(None, None)
    with pytest.raises(ValueError):
        clients.parse_input("[1, 2]")
    with pytest.raises(ValueError):
        clients.parse_input("{not json")


def test_inject_only_on_startup_and_clear() -> None:
    assert {"startup", "clear", "new"} == clients.INJECT_ON  # "new": VS Code's fresh session
