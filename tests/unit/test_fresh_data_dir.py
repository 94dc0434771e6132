"""Each test finds the worker's data dir without what an earlier test's hooks kept or logged: the
hook log `lore doctor` reads included (an earlier test's failed hook read as a FAIL in another's
`lore doctor`, 2026-12-05)."""

from __future__ import annotations

from pathlib import Path

from support.db import HOOK_STATE, forget_hook_state

from lore.core import hooklog


def test_what_an_earlier_test_kept_or_logged_is_gone(tmp_path: Path) -> None:
    env = {"LORE_DATA_DIR": str(tmp_path)}
    hooklog.append("claude-code", "session-start", False, "the server refused LORE_TOKEN (401)", env)
    for kept in HOOK_STATE:
        (tmp_path / kept).mkdir()
        (tmp_path / kept / "left").write_text("x")
    assert hooklog.entries(env)
    forget_hook_state(tmp_path)
    assert hooklog.entries(env) == []
    assert not any((tmp_path / kept).exists() for kept in HOOK_STATE)
    forget_hook_state(tmp_path)  # nothing to forget: no error
