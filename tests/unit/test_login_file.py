"""The stored login (lore.core.login): owner-only, whole or not at all, never read when another user
could have written or read it, and never beside a config file that may be in a repository."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lore.core import login
from lore.core.errors import Refused


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "LORE_CONFIG": str(tmp_path / "repo" / "lore.toml")}


def test_written_owner_only_in_the_config_dir_and_read_back(tmp_path: Path) -> None:
    env = _env(tmp_path)
    stored = login.Login("https://lore.example.com", "alice", "lore_" + "a" * 43)
    where = login.write(env, stored)
    assert where == tmp_path / "home" / ".config" / "lore" / "login.json"  # not beside LORE_CONFIG
    assert stat.S_IMODE(where.stat().st_mode) == 0o600
    assert stat.S_IMODE(where.parent.stat().st_mode) == 0o700
    assert login.read(env) == stored
    assert [p.name for p in where.parent.iterdir()] == ["login.json"]  # no temporary file left
    assert login.remove(env) and login.read(env) is None and not login.remove(env)


def test_xdg_config_home_is_honoured(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert login.path(env) == tmp_path / "xdg" / "lore" / "login.json"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604])
def test_a_file_others_can_read_is_refused(tmp_path: Path, mode: int) -> None:
    env = _env(tmp_path)
    where = login.write(env, login.Login("https://h", "alice", "lore_" + "a" * 43))
    os.chmod(where, mode)
    with pytest.raises(Refused, match="readable by others") as refused:
        login.read(env)
    assert "lore logout" in refused.value.hint and "lore_" not in str(refused.value)


def test_a_link_and_a_foreign_shape_are_refused(tmp_path: Path) -> None:
    env = _env(tmp_path)
    where = login.path(env)
    where.parent.mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text('{"url": "https://h", "user": "a", "token": "t"}')
    os.chmod(target, 0o600)
    where.symlink_to(target)
    with pytest.raises(Refused, match="unusable"):
        login.read(env)
    where.unlink()
    where.write_text('{"url": "file:///etc/passwd", "user": "a", "token": "t"}')
    os.chmod(where, 0o600)
    with pytest.raises(Refused, match="not a login lore wrote"):
        login.read(env)


def test_an_oauth_login_is_stale_a_minute_before_it_runs_out() -> None:
    stored = login.Login("https://h", "a", "t", kind="oauth", refresh_token="r", expires_at=1000.0)
    assert not stored.stale(900.0) and stored.stale(945.0)
    assert not login.Login("https://h", "a", "t").stale(10**12)  # a personal token is never refreshed
    renewed = stored.refreshed("t2", "r2", 3600, 2000.0)
    assert (renewed.token, renewed.refresh_token, renewed.expires_at) == ("t2", "r2", 5600.0)


def test_which_server_is_one_rule_that_asks_the_server_nothing(tmp_path: Path) -> None:
    """lore.hooks.credentials.where: `--server URL`, else LORE_URL, else the login; the login's token
    only for its own origin. A stale OAuth login is not refreshed (`lore install` asks this)."""
    from lore.hooks import credentials

    env = _env(tmp_path)
    assert credentials.where(env) is None
    stored = login.Login(
        "https://lore.example.com", "alice", "t", kind="oauth", refresh_token="r", expires_at=1.0,
        token_endpoint="http://127.0.0.1:9/token",  # nothing listens: a refresh would fail
    )  # fmt: skip
    login.write(env, stored)
    assert credentials.where(env) == ("https://lore.example.com", stored)
    assert credentials.where({**env, "LORE_URL": "https://lore.example.com/"}) == (
        "https://lore.example.com",
        stored,
    )
    assert credentials.where({**env, "LORE_URL": "https://other.example.com"}) == (
        "https://other.example.com",
        None,
    )
    assert credentials.where(
        {**env, "LORE_URL": "https://other.example.com"}, "https://lore.example.com"
    ) == (
        "https://lore.example.com",
        stored,
    )
    assert login.read(env) == stored  # untouched: nothing was refreshed
