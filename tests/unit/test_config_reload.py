"""The live config of a long-running server (lore.config.LiveConfig, Runtime): re-read when the
file's stat signature changes, an invalid file is an error (never the last good config). No database."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lore.core.config import LiveConfig, file_signature
from lore.core.errors import ConfigError
from lore.service.runtime import Runtime

ONE = 'default_space = "personal"\n[[space]]\nid = "personal"\n'
TWO = ONE + '[[space]]\nid = "side"\npaths = ["/tmp/side"]\n'
BROKEN = ONE + "[[space]\nid = \n"


def _touch(path: Path, text: str, mtime_ns: int) -> None:
    """Write in place (same inode) and set the modification time explicitly (no clock granularity)."""
    path.write_text(text)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_signature_follows_mtime_size_and_inode(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    assert file_signature(path) is None  # missing
    _touch(path, ONE, 1_000_000_000_000_000_000)
    first = file_signature(path)
    assert first is not None and file_signature(path) == first  # unchanged: same signature

    _touch(path, ONE.replace("personal", "personaL"), 1_000_000_000_000_000_001)  # same size, 1 ns later
    same_size = file_signature(path)
    assert same_size is not None and same_size != first and same_size[1] == first[1]

    _touch(path, TWO, 1_000_000_000_000_000_001)  # same mtime, another size
    assert file_signature(path) != same_size

    before = file_signature(path)
    replacement = tmp_path / "config.toml.new"  # how editors save: a new file renamed over the old
    _touch(replacement, TWO, 1_000_000_000_000_000_001)
    os.replace(replacement, path)
    after = file_signature(path)
    assert after is not None and before is not None and after[2] != before[2]  # another inode
    assert after != before


def test_live_config_reloads_only_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    _touch(path, ONE, 2_000_000_000_000_000_000)
    live = LiveConfig({"LORE_CONFIG": str(path)})
    assert live.path == path
    first = live.get()
    assert first.ids == ("personal",)
    assert live.get() is first and live.get() is first and live.loads == 1  # a stat, no read

    _touch(path, TWO, 2_000_000_000_000_000_001)
    second = live.get()
    assert second.ids == ("personal", "side") and live.loads == 2
    assert live.get() is second and live.loads == 2


def test_an_invalid_file_fails_every_call_until_fixed(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    _touch(path, TWO, 3_000_000_000_000_000_000)
    live = LiveConfig({"LORE_CONFIG": str(path)})
    assert live.get().ids == ("personal", "side")

    _touch(path, BROKEN, 3_000_000_000_000_000_001)
    errors = []
    for _ in range(2):  # never the last good config, on any call
        with pytest.raises(ConfigError) as caught:
            live.get()
        errors.append(caught.value)
    assert live.loads == 2  # the broken file was read once
    assert errors[0] is not errors[1]  # a fresh exception each time (no growing traceback)
    for error in errors:
        assert f"{path}:4: invalid TOML" in error.message and "fix the syntax on line 4" in error.hint

    path.unlink()  # missing is an error too, with the fix
    with pytest.raises(ConfigError, match="no lore config file"):
        live.get()

    _touch(path, ONE, 3_000_000_000_000_000_002)
    assert live.get().ids == ("personal",) and live.loads == 4


def test_app_state_config_is_the_file_as_it_is_now(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    _touch(path, ONE, 4_000_000_000_000_000_000)
    state = Runtime(env={"LORE_CONFIG": str(path)}, transport="stdio", cwd=str(tmp_path))
    assert state.config().ids == ("personal",)
    _touch(path, TWO, 4_000_000_000_000_000_001)
    assert state.config().ids == ("personal", "side")
    _touch(path, BROKEN, 4_000_000_000_000_000_002)
    with pytest.raises(ConfigError, match="invalid TOML"):
        state.config()
    _touch(path, ONE, 4_000_000_000_000_000_003)
    assert state.config().ids == ("personal",)
