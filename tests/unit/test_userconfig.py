"""A signed-in user's config: every id namespaced, `~` as the user's HOME, validation as locally."""

from __future__ import annotations

from pathlib import Path

import pytest

from lore.core import users as userconfig
from lore.core.config import parse_config
from lore.core.errors import ConfigError, InvalidInput
from lore.core.spaces import resolve

TOML = """
default_space = "home"
[[space]]
id = "work"
paths = ["~/codes/acme-*"]
reads_from = ["home"]
accepts_from = ["home"]
[[space]]
id = "home"
paths = ["~/dotfiles"]
[database]
url = "postgresql://somewhere/else"
"""


def test_scope_prefixes_every_id_and_nothing_else() -> None:
    config = userconfig.scope(parse_config(TOML, Path("c.toml")), "alice")
    assert config.ids == ("alice/work", "alice/home")
    assert config.default_space == "alice/home"
    work = config.space("alice/work")
    assert work is not None and work.reads_from == ("alice/home",) and work.accepts_from == ("alice/home",)
    assert work.paths == ("~/codes/acme-*",)
    assert config.database_url is None  # a pushed config never chooses the server's database
    assert config.readable_spaces("alice/work") == ("alice/work", "alice/home")
    assert config.space("work") is None and config.space("bob/work") is None


def test_two_users_with_the_same_config_share_no_space_id() -> None:
    parsed = parse_config(TOML, Path("c.toml"))
    alice, bob = userconfig.scope(parsed, "alice"), userconfig.scope(parsed, "bob")
    assert not set(alice.ids) & set(bob.ids)
    assert userconfig.local_name("alice", "alice/work") == "work"


def test_tilde_is_the_pushing_users_home(tmp_path: Path) -> None:
    pushed = userconfig.parse(TOML, "alice", "/home/alice")
    assert pushed.ignored and "database" in pushed.ignored[0]
    env = pushed.env()
    assert env == {"HOME": "/home/alice"}
    got = resolve(Path("/home/alice/codes/acme-api/src"), pushed.config, env)
    assert (got.space, got.rule) == ("alice/work", "path")
    assert resolve(Path("/srv/elsewhere"), pushed.config, env).space == "alice/home"


def test_a_bad_config_is_refused_naming_the_user_and_line() -> None:
    with pytest.raises(ConfigError) as err:
        userconfig.parse('[[space]]\nid = "w"\nreads_from = ["nope"]\n', "alice", "/home/alice")
    assert "the config of user alice" in err.value.message and ":3:" in err.value.message
    with pytest.raises(InvalidInput):
        userconfig.parse(TOML, "alice", "relative/home")
    with pytest.raises(InvalidInput):
        userconfig.parse(TOML, "not/a/user", "/home/x")
