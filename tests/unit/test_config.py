from __future__ import annotations

from pathlib import Path

import pytest

from lore.core.config import (
    STARTER_CONFIG,
    Config,
    SpaceConfig,
    config_path,
    load_config,
    parse_config,
    stale_paths,
    unreachable_spaces,
)
from lore.core.errors import ConfigError

FILE = Path("/etc/lore/config.toml")


def parse_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        parse_config(text, FILE)
    return info.value


def test_starter_config_is_valid_and_explicit() -> None:
    config = parse_config(STARTER_CONFIG, FILE)
    assert config.default_space == "personal"
    assert config.spaces == (SpaceConfig("personal"),)
    assert config.session_start_max_chars == 8000
    assert config.database_url is None
    assert config.path == FILE


def test_full_config() -> None:
    text = """
default_space = "personal"

[[space]]
id    = "personal"
paths = ["~/dotfiles"]

[[space]]
id           = "work"
paths        = ["~/codes/acme-*", "/srv/acme"]
remotes      = ["github.com/acme/*"]
reads_from   = ["personal"]
accepts_from = ["personal"]

[database]
url = "postgresql://u@db/lore"

[session_start]
max_chars = 9500
"""
    config = parse_config(text, FILE)
    work = config.space("work")
    assert work == SpaceConfig(
        "work", ("~/codes/acme-*", "/srv/acme"), ("github.com/acme/*",), ("personal",), ("personal",)
    )
    assert config.space("nope") is None
    assert config.ids == ("personal", "work")
    assert config.database_url == "postgresql://u@db/lore"
    assert config.session_start_max_chars == 9500


def test_readable_spaces_one_way_and_not_transitive() -> None:
    text = """
[[space]]
id = "a"
reads_from = ["b"]

[[space]]
id = "b"
reads_from = ["c"]

[[space]]
id = "c"
"""
    config = parse_config(text, FILE)
    assert config.readable_spaces("a") == ("a", "b")  # not c: reads_from is not transitive
    assert config.readable_spaces("b") == ("b", "c")
    assert config.readable_spaces("c") == ("c",)  # one-way: c does not read a or b


def test_unknown_reads_from_names_file_line_and_fix() -> None:
    text = '[[space]]\nid = "a"\n\n[[space]]\nid = "b"\nreads_from = [\n  "a",\n  "ghost",\n]\n'
    err = parse_error(text)
    assert err.message.startswith(f"{FILE}:8: ")
    assert "'ghost'" in err.message and "reads_from" in err.message
    assert 'id = "ghost"' in err.hint and "a, b" in err.hint


def test_unknown_accepts_from() -> None:
    err = parse_error('[[space]]\nid = "a"\naccepts_from = ["zed"]\n')
    assert err.message.startswith(f"{FILE}:3: ") and "accepts_from" in err.message and "'zed'" in err.message


def test_duplicate_id_names_the_second_line() -> None:
    text = '[[space]]\nid = "work"\n\n[[space]]\nid = "home"\n\n[[space]]\nid = "work"\n'
    err = parse_error(text)
    assert err.message == f"{FILE}:8: duplicate space id 'work' (first defined on line 2)"
    assert "own id" in err.hint


def test_bad_toml_names_the_line() -> None:
    err = parse_error('default_space = "a"\n\n[[space]]\nid = "a"\npaths = [~/x]\n')
    assert err.message.startswith(f"{FILE}:5: invalid TOML: ")
    assert "paths = [~/x]" in err.message
    assert "line 5" in err.hint


def test_bad_toml_at_end_of_document() -> None:
    err = parse_error('[[space]]\nid = "a"\npaths = ["/x",\n')
    assert err.message.startswith(f"{FILE}: invalid TOML: ")
    assert "at the end" in err.message and "unclosed" in err.hint


@pytest.mark.parametrize(
    ("text", "line", "key"),
    [
        ('defualt_space = "a"\n[[space]]\nid = "a"\n', 1, "defualt_space"),
        ('[[space]]\nid = "a"\npath = ["/x"]\n', 3, "path"),
        ('[database]\nuri = "postgresql://"\n', 2, "uri"),
        ("[session_start]\nmax_char = 900\n", 2, "max_char"),
    ],
)
def test_unknown_keys_are_typos(text: str, line: int, key: str) -> None:
    err = parse_error(text)
    assert err.message.startswith(f"{FILE}:{line}: unknown key {key!r}")
    assert "known keys" in err.hint


def test_unknown_space_key_lists_known_keys() -> None:
    err = parse_error('[[space]]\nid = "a"\nremote = ["github.com/x/*"]\n')
    assert "id, paths, remotes, reads_from, accepts_from" in err.hint


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('[[space]]\nid = "a"\npaths = "~/x"\n', "paths must be a list"),
        ('[[space]]\nid = "a"\nremotes = [1]\n', "remotes must be a list"),
        ('[[space]]\nid = "a"\npaths = [""]\n', "paths must be a list"),
        ("default_space = 3\n", "default_space names unknown space 3"),
        ("[database]\nurl = 5\n", "database.url must be"),
        ("database = 5\n", "database must be a [database] table"),
        ("space = 3\n", "`space` must be a list"),
        ('[session_start]\nmax_chars = "8000"\n', "max_chars must be an integer"),
        ("[session_start]\nmax_chars = true\n", "max_chars must be an integer"),
    ],
)
def test_wrong_types(text: str, fragment: str) -> None:
    err = parse_error(text)
    assert fragment in err.message
    assert err.hint


@pytest.mark.parametrize("value", [499, 9501, 20000])
def test_max_chars_range(value: int) -> None:
    err = parse_error(f"[session_start]\nmax_chars = {value}\n")
    assert err.message.startswith(f"{FILE}:2: ") and "500 to 9500" in err.message


@pytest.mark.parametrize("value", [500, 9500])
def test_max_chars_bounds_allowed(value: int) -> None:
    assert parse_config(f"[session_start]\nmax_chars = {value}\n", FILE).session_start_max_chars == value


@pytest.mark.parametrize("bad", ["", "a b", "x/y", "é", "a" * 65])
def test_invalid_ids(bad: str) -> None:
    err = parse_error(f'[[space]]\npaths = []\nid = "{bad}"\n')
    assert err.message.startswith(f"{FILE}:3: ") and "invalid id" in err.message
    assert "1-64" in err.hint


def test_missing_id() -> None:
    err = parse_error('[[space]]\npaths = ["/x"]\n')
    assert err.message.startswith(f"{FILE}:1: [[space]] #1 has no id")


@pytest.mark.parametrize("good", ["a", "client-acme", "v1.2_x", "A" * 64])
def test_valid_ids(good: str) -> None:
    assert parse_config(f'[[space]]\nid = "{good}"\n', FILE).ids == (good,)


def test_default_space_must_exist() -> None:
    err = parse_error('default_space = "work"\n[[space]]\nid = "personal"\n')
    assert err.message == f"{FILE}:1: default_space names unknown space 'work'"
    assert "personal" in err.hint


def test_paths_must_be_absolute_and_star_only_trailing() -> None:
    err = parse_error('[[space]]\nid = "a"\npaths = [\n  "/ok",\n  "codes/x",\n]\n')
    assert err.message.startswith(f"{FILE}:5: ") and "relative" in err.message
    err = parse_error('[[space]]\nid = "a"\npaths = ["~/codes/*/api"]\n')
    assert err.message.startswith(f"{FILE}:3: ") and "trailing" in err.hint


def test_load_config_missing_file_says_lore_init(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load_config({"LORE_CONFIG": str(missing)})
    assert str(missing) in info.value.message
    assert "lore init" in info.value.hint


def test_load_config_reads_lore_config(tmp_path: Path) -> None:
    file = tmp_path / "c.toml"
    file.write_text("\ufeff" + STARTER_CONFIG, encoding="utf-8")
    config = load_config({"LORE_CONFIG": str(file)})
    assert config.path == file and config.default_space == "personal"
    assert load_config(path=file).ids == ("personal",)


def test_config_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert config_path({"LORE_CONFIG": "/x/y.toml"}) == Path("/x/y.toml")
    assert config_path({"LORE_CONFIG": "~/l.toml", "HOME": "/home/u"}) == Path("/home/u/l.toml")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert config_path({"LORE_CONFIG": ""}) == tmp_path / "xdg" / "lore" / "config.toml"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config_path({}) == tmp_path / ".config" / "lore" / "config.toml"


def test_stale_paths(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "codes" / "acme-api").mkdir(parents=True)
    (home / "dotfiles").mkdir()
    (home / "codes" / "beta-file").write_text("not a directory")
    config = Config(
        None,
        None,
        (
            SpaceConfig("personal", ("~/dotfiles", "~/gone")),
            SpaceConfig("work", ("~/codes/acme-*", "~/codes/beta-*", "~/nowhere/x-*", str(home / "codes"))),
        ),
    )
    assert stale_paths(config, {"HOME": str(home)}) == [
        ("personal", "~/gone"),
        ("work", "~/codes/beta-*"),
        ("work", "~/nowhere/x-*"),
    ]


def test_unreachable_spaces() -> None:
    config = Config(
        None,
        "personal",
        (
            SpaceConfig("personal"),
            SpaceConfig("work", paths=("/w",), reads_from=("shared",)),
            SpaceConfig("shared"),
            SpaceConfig("remote-only", remotes=("github.com/x/*",)),
            SpaceConfig("orphan", reads_from=("island",)),
            SpaceConfig("island"),
        ),
    )
    # island is only read by orphan, which no session can ever be in
    assert unreachable_spaces(config) == ["orphan", "island"]
    no_default = Config(None, None, (SpaceConfig("personal"), SpaceConfig("work", paths=("/w",))))
    assert unreachable_spaces(no_default) == ["personal"]
