"""`lore install claude-code` merges, is idempotent, backs up, and uninstalls exactly what it added."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lore.core.errors import ConfigError, InvalidInput
from lore.installers import claude_code, get

LORE = "/opt/lore/.venv/bin/lore"


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_install_merges_and_uninstall_restores(tmp_path: Path) -> None:
    user_mcp = {"mcpServers": {"github": {"command": "gh-mcp"}}, "numStartups": 7}
    user_settings: dict[str, Any] = {
        "theme": "dark",
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify"}]}],
        },
    }
    write(tmp_path / ".claude.json", user_mcp)
    write(tmp_path / ".claude" / "settings.json", user_settings)

    first = claude_code.install(tmp_path, LORE)
    assert [c.action for c in first] == ["added", "added"]  # lore's entries are new, in existing files
    mcp = json.loads((tmp_path / ".claude.json").read_text())
    assert mcp["mcpServers"]["github"] == {"command": "gh-mcp"} and mcp["numStartups"] == 7
    assert mcp["mcpServers"]["lore"] == {"type": "stdio", "command": LORE, "args": ["mcp"], "env": {}}
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    groups = settings["hooks"]["SessionStart"]
    assert groups[0] == user_settings["hooks"]["SessionStart"][0]
    assert groups[1] == {
        "matcher": "startup|clear",
        "hooks": [
            {"type": "command", "command": f"{LORE} hook session-start --client claude-code", "timeout": 5}
        ],
    }
    assert settings["hooks"]["UserPromptSubmit"] == [
        {"hooks": [{"type": "command", "command": f"{LORE} hook prompt --client claude-code", "timeout": 5}]}
    ]
    # The user's Stop hook stays first; lore's (the handoff) comes after it, and a SessionEnd hook too.
    end = {"type": "command", "command": f"{LORE} hook session-end --client claude-code", "timeout": 5}
    assert settings["hooks"]["Stop"] == [*user_settings["hooks"]["Stop"], {"hooks": [end]}]
    assert settings["hooks"]["SessionEnd"] == [{"hooks": [end]}]
    # backups of what the user had
    assert json.loads((tmp_path / ".claude.json.lore-backup").read_text()) == user_mcp

    again = claude_code.install(tmp_path, LORE)
    assert [c.action for c in again] == ["unchanged", "unchanged"]
    moved = claude_code.install(tmp_path, "/new/place/lore")
    assert [c.action for c in moved] == ["updated", "updated"]
    moved_hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    assert len(moved_hooks["SessionStart"]) == 2 and len(moved_hooks["UserPromptSubmit"]) == 1
    assert len(moved_hooks["Stop"]) == 2 and len(moved_hooks["SessionEnd"]) == 1
    assert moved_hooks["UserPromptSubmit"][0]["hooks"][0]["command"].startswith("/new/place/lore hook prompt")

    removed = claude_code.uninstall(tmp_path)
    assert [c.action for c in removed] == ["removed", "removed"]
    assert json.loads((tmp_path / ".claude.json").read_text()) == user_mcp
    assert json.loads((tmp_path / ".claude" / "settings.json").read_text()) == user_settings
    assert claude_code.uninstall(tmp_path)[0].action == "unchanged"


def test_fresh_home(tmp_path: Path) -> None:
    claude_code.install(tmp_path, LORE)
    claude_code.uninstall(tmp_path)
    assert json.loads((tmp_path / ".claude.json").read_text()) == {"mcpServers": {}}
    assert json.loads((tmp_path / ".claude" / "settings.json").read_text()) == {}


def test_refuses_to_touch_broken_json(tmp_path: Path) -> None:
    (tmp_path / ".claude.json").write_text("{broken")
    with pytest.raises(ConfigError) as err:
        claude_code.install(tmp_path, LORE)
    assert "did not change it" in err.value.hint
    assert (tmp_path / ".claude.json").read_text() == "{broken"


def test_unknown_client_lists_known() -> None:
    with pytest.raises(InvalidInput) as err:
        get("emacs")
    assert "claude-code" in err.value.hint


def test_prompt_hook_joins_the_users_own_prompt_hooks(tmp_path: Path) -> None:
    mine = {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "log-prompt"}]}]}}
    write(tmp_path / ".claude" / "settings.json", mine)
    claude_code.install(tmp_path, LORE)
    groups = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"]
    assert groups[0] == mine["hooks"]["UserPromptSubmit"][0] and len(groups) == 2
    claude_code.uninstall(tmp_path)
    after = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert after == mine
