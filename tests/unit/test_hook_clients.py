"""Per-client hook input and output shapes (docs/design.md, Session start), pinned."""

from __future__ import annotations

import json

import pytest

from lore.core import clients

# What each client reads on stdout, written out by hand from each client's hook documentation
# (docs/design.md, Session start): never derived from lore.clients, so a change to one shape
# fails here.
NESTED = '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "MEMORY \\"x\\""}}'
EXPECTED = {
    "claude-code": NESTED,
    "gemini": NESTED,
    "codex": NESTED,
    "vscode": NESTED,
    "copilot": '{"additionalContext": "MEMORY \\"x\\""}',  # flat: Copilot CLI drops the nested shape
    "cursor": '{"additional_context": "MEMORY \\"x\\""}',
    "cline": '{"contextModification": "MEMORY \\"x\\""}',
    "opencode": 'MEMORY "x"',  # the plugin takes the text itself
}


def test_every_client_is_pinned() -> None:
    assert sorted(clients.CLIENTS) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exact_output_of_each_client(name: str) -> None:
    printed = clients.client(name).shape('MEMORY "x"')
    expected = EXPECTED[name]
    if name == "opencode":
        assert printed == expected
    else:
        # the same JSON value, key for key (no key missing, none added, nothing nested differently)
        assert json.loads(printed) == json.loads(expected)


def test_claude_code_shape_is_nested_never_flat() -> None:
    out = json.loads(clients.client("claude-code").shape("MEMORY"))
    assert out == {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "MEMORY"}}
    assert "additionalContext" not in out


def test_which_clients_inject() -> None:
    assert {n for n, c in clients.CLIENTS.items() if not c.injects} == set()  # Copilot CLI does too


def test_copilot_shape_is_flat_never_nested() -> None:
    out = json.loads(clients.client("copilot").shape("MEMORY"))
    assert out == {"additionalContext": "MEMORY"}


def test_unknown_client_lists_known_ones() -> None:
    with pytest.raises(ValueError, match="known: claude-code, cline, codex"):
        clients.client("emacs")


def test_parse_input_cwd_and_cursor_roots() -> None:
    claude = clients.parse_input(
        '{"session_id":"s","cwd":"/p","hook_event_name":"SessionStart","source":"clear"}'
    )
    assert claude == clients.HookInput("/p", "clear", "s")
    cursor = clients.parse_input('{"workspace_roots": ["/w", "/x"], "hook_event_name": "sessionStart"}')
    assert cursor == clients.HookInput("/w", None)
    copilot = clients.parse_input(  # what Copilot CLI 1.0.102 sends a sessionStart hook
        '{"sessionId":"s","timestamp":1796147767039,"cwd":"/p","source":"new","initialPrompt":"hi"}'
    )
    assert copilot == clients.HookInput("/p", "new", "s")
    assert clients.parse_input("") == clients.HookInput(None, None)
    with pytest.raises(ValueError):
        clients.parse_input("[1, 2]")
    with pytest.raises(ValueError):
        clients.parse_input("{not json")


def test_inject_only_on_startup_and_clear() -> None:
    # "new": a fresh session in VS Code and Copilot CLI
    assert {"startup", "clear", "new"} == clients.INJECT_ON


def test_client_names_agents_give_map_to_lores_ids() -> None:
    from lore.core.clients import MCP_NAMES, canonical

    assert canonical("gemini-cli-mcp-client") == "gemini" and canonical("claude-code") == "claude-code"
    assert canonical("@cline/core") == "cline" and canonical("copilot-cli") == "copilot"
    assert canonical("Visual Studio Code") == "vscode" and canonical(" Cursor-VSCode ") == "cursor"
    assert canonical("some-new-agent") == "some-new-agent" and canonical("  ") == "unknown"
    assert set(MCP_NAMES.values()) <= set(clients.CLIENTS)  # every target is a client lore installs
    for name in clients.CLIENTS:  # lore's own ids map to themselves (hook --client, install)
        assert canonical(name) == name and clients.client(name).name == name
    assert clients.client("gemini-cli").name == "gemini"
