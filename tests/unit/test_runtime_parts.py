"""The runtime's parts stand alone (lore.service.runtime): each is built from what it needs, passed
explicitly, and works without a Runtime around it. No database."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import pytest

from lore.core.config import Config
from lore.core.errors import ConfigError, Refused
from lore.core.workspace import WorkspaceSignal
from lore.service.runtime import Runtime
from lore.service.runtime.configs import Configs
from lore.service.runtime.listeners import poll_seconds
from lore.service.runtime.sessions import ClientNames, Sessions, file_path

ONE = 'default_space = "personal"\n[[space]]\nid = "personal"\n'
T = TypeVar("T")
DATABASE = '[database]\nurl = "postgresql://db/lore"\nlisten_url = "off"\npooler = "none"\n'


def test_configs_say_what_the_file_says_of_the_database(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    configs = Configs({"LORE_CONFIG": str(path)})
    with pytest.raises(ConfigError, match="no lore config file"):
        configs.database()  # a local process needs its file
    configs.optional = True  # ... the commands that move a whole database do not
    assert configs.database() == (None, None, None)
    path.write_text(ONE + DATABASE)
    assert configs.database() == ("postgresql://db/lore", "off", "none")
    assert configs.optional_local() is configs.local() is configs.current()


def test_configs_in_sign_in_mode_need_a_signed_in_request(tmp_path: Path) -> None:
    class Accounts:
        pass

    configs = Configs({"LORE_CONFIG": str(tmp_path / "missing.toml")})
    assert configs.user() is None
    who: list[str | None] = [None]
    configs.sign_in(Accounts(), lambda: who[0])  # type: ignore[arg-type]
    with pytest.raises(Refused, match="not signed in"):
        configs.user()
    who[0] = "alice"
    assert configs.user() == "alice"
    assert configs.database() == (None, None, None)  # a server in sign-in mode needs no file


def test_sessions_resolve_a_workspace_once_per_config(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(ONE)
    env = {"LORE_CONFIG": str(path)}
    configs = Configs(env)
    sessions = Sessions(env, str(tmp_path), configs)
    config = configs.current()
    signal = WorkspaceSignal(tmp_path, "api workspace")
    first = sessions.resolve(signal, config, env, "test")
    assert first.space == "personal"
    assert sessions.resolve(signal, config, env, "test") is first  # cached (RESOLVE_TTL)
    other = Config(config.path, config.default_space, config.spaces)
    assert sessions.resolve(signal, other, env, "test") is not first  # a new config: resolved again
    assert sessions.command_session(None).space == "personal"


def test_client_names_are_recorded_once_and_never_stop_a_call() -> None:
    calls: list[tuple[Any, ...]] = []

    def transact(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        calls.append((fn.__name__, *args))
        return cast(T, "gemini")

    clients = ClientNames(transact)
    assert clients.client_id("gemini-cli-mcp-client", "1.0") == "gemini"
    assert clients.client_id("gemini-cli-mcp-client", "1.0") == "gemini"
    assert calls == [("record", "gemini-cli-mcp-client", "1.0")]  # once per name and process

    def down(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        raise OSError("no database")

    assert ClientNames(down).client_id("gemini-cli-mcp-client", None) == "gemini"  # lore's id anyway


def test_the_runtime_hands_out_its_parts(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(ONE)
    rt = Runtime({"LORE_CONFIG": str(path)}, "cli", cwd=str(tmp_path), config_optional=True)
    assert rt.config_optional and rt.configs.optional
    rt.config_optional = False
    assert not rt.configs.optional
    assert rt.config() is rt.configs.current()
    assert rt.accounts is None and rt.user() is None
    assert rt.command_session(None).space == rt.sessions.command_session(None).space == "personal"
    assert rt.replies.poll_seconds == poll_seconds(rt.env) == 5.0
    assert file_path("file:///home/a%20b") == "/home/a b"
