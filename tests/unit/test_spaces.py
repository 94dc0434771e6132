from __future__ import annotations

import os
from pathlib import Path

import pytest

from lore.core.config import Config, SpaceConfig, parse_config
from lore.core.errors import AmbiguousSpace, SpaceError
from lore.core.spaces import Resolved, resolve
from lore.core.workspace import GitInfo

NO_GIT = GitInfo(Path("/nonexistent-top"), Path("/nonexistent-top"))  # a repo with no remotes


def config(*spaces: SpaceConfig, default: str | None = None, path: Path | None = None) -> Config:
    return Config(path or Path("/cfg/config.toml"), default, spaces)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = Path(os.path.realpath(tmp_path)) / "home"
    for d in ("codes/acme-api/src", "codes/acme-web/src", "codes/acme", "codes/other", "a/b/c", "a/bc"):
        (home / d).mkdir(parents=True)
    return home


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def test_env_override_wins(home: Path) -> None:
    cfg = config(SpaceConfig("personal", ("~/codes",)), SpaceConfig("work"))
    got = resolve(home / "codes", cfg, env_for(home, LORE_SPACE="work"), NO_GIT)
    assert got == Resolved("work", "env", None, home / "codes", "LORE_SPACE=work is set in the environment")


def test_env_naming_unknown_space_is_an_error(home: Path) -> None:
    cfg = config(SpaceConfig("personal"), SpaceConfig("work"), default="personal")
    with pytest.raises(SpaceError) as info:
        resolve(home, cfg, env_for(home, LORE_SPACE="wrok"), NO_GIT)
    assert "LORE_SPACE=wrok" in info.value.message and "personal, work" in info.value.message
    assert "/cfg/config.toml" in info.value.hint


def test_longest_path_wins(home: Path) -> None:
    cfg = config(SpaceConfig("broad", ("~/codes",)), SpaceConfig("narrow", ("~/codes/acme-api",)))
    env = env_for(home)
    got = resolve(home / "codes/acme-api/src", cfg, env, NO_GIT)
    assert (got.space, got.rule, got.pattern) == ("narrow", "path", "~/codes/acme-api")
    assert got.reason == f"path ~/codes/acme-api matches {home / 'codes/acme-api/src'}"
    assert resolve(home / "codes/other", cfg, env, NO_GIT).space == "broad"


def test_trailing_star_is_a_plain_prefix(home: Path) -> None:
    cfg = config(SpaceConfig("personal"), SpaceConfig("work", ("~/codes/acme-*",)), default="personal")
    env = env_for(home)
    for ws in ("codes/acme-api", "codes/acme-web/src"):
        got = resolve(home / ws, cfg, env, NO_GIT)
        assert (got.space, got.rule, got.pattern) == ("work", "path", "~/codes/acme-*")
    # "acme" lacks the "-" of the prefix, and "codes" itself is above it
    assert resolve(home / "codes/acme", cfg, env, NO_GIT).rule == "default"
    assert resolve(home / "codes", cfg, env, NO_GIT).rule == "default"


def test_star_beats_shorter_plain_path(home: Path) -> None:
    cfg = config(SpaceConfig("all", ("~/codes",)), SpaceConfig("acme", ("~/codes/acme-*",)))
    assert resolve(home / "codes/acme-web/src", cfg, env_for(home), NO_GIT).space == "acme"


def test_directory_itself_and_beneath_but_not_sibling_prefix(home: Path) -> None:
    cfg = config(SpaceConfig("ab", (str(home / "a/b"),)), SpaceConfig("fallback"), default="fallback")
    env = env_for(home)
    assert resolve(home / "a/b", cfg, env, NO_GIT).space == "ab"
    assert resolve(home / "a/b/c", cfg, env, NO_GIT).space == "ab"
    assert resolve(home / "a/bc", cfg, env, NO_GIT).space == "fallback"  # /a/b must not match /a/bc
    assert resolve(home / "a", cfg, env, NO_GIT).space == "fallback"


def test_tilde_uses_home_from_env(home: Path, tmp_path: Path) -> None:
    other_home = Path(os.path.realpath(tmp_path)) / "other"
    (other_home / "codes").mkdir(parents=True)
    cfg = config(SpaceConfig("w", ("~/codes",)), SpaceConfig("d"), default="d")
    assert resolve(home / "codes/other", cfg, env_for(home), NO_GIT).space == "w"
    assert resolve(home / "codes/other", cfg, env_for(other_home), NO_GIT).space == "d"
    assert resolve(other_home / "codes", cfg, env_for(other_home), NO_GIT).space == "w"


def test_symlink_in_configured_path(home: Path) -> None:
    (home / "link-to-codes").symlink_to(home / "codes", target_is_directory=True)
    cfg = config(SpaceConfig("w", ("~/link-to-codes/acme-api",)))
    got = resolve(home / "codes/acme-api/src", cfg, env_for(home), NO_GIT)
    assert (got.space, got.rule) == ("w", "path")


def test_symlink_in_workspace(home: Path) -> None:
    (home / "ws-link").symlink_to(home / "codes/acme-web", target_is_directory=True)
    cfg = config(SpaceConfig("w", ("~/codes/acme-web",)))
    assert resolve(home / "ws-link/src", cfg, env_for(home), NO_GIT).space == "w"


def test_symlink_on_both_sides_with_star(home: Path, tmp_path: Path) -> None:
    elsewhere = Path(os.path.realpath(tmp_path)) / "disk/acme-data"
    elsewhere.mkdir(parents=True)
    (home / "codes/acme-data").symlink_to(elsewhere, target_is_directory=True)  # project lives elsewhere
    (home / "c").symlink_to(home / "codes", target_is_directory=True)
    cfg = config(SpaceConfig("work", ("~/c/acme-*",)))
    assert resolve(home / "codes/acme-data", cfg, env_for(home), NO_GIT).space == "work"


def test_tie_is_an_error_naming_both_spaces_workspace_patterns_and_fix(home: Path) -> None:
    (home / "alias").symlink_to(home / "codes", target_is_directory=True)
    cfg = config(SpaceConfig("work", ("~/codes",)), SpaceConfig("play", ("~/alias",)))
    ws = home / "codes/other"
    with pytest.raises(AmbiguousSpace) as info:
        resolve(ws, cfg, env_for(home), NO_GIT)
    msg = info.value.message
    assert "'work'" in msg and "'play'" in msg
    assert str(ws) in msg
    assert "~/codes" in msg and "~/alias" in msg
    assert "more specific" in info.value.hint and "/cfg/config.toml" in info.value.hint


def test_same_space_twice_is_not_ambiguous(home: Path) -> None:
    (home / "alias").symlink_to(home / "codes", target_is_directory=True)
    cfg = config(SpaceConfig("work", ("~/codes", "~/alias")))
    assert resolve(home / "codes/acme", cfg, env_for(home), NO_GIT).space == "work"


def test_no_match_without_default_is_an_error(home: Path) -> None:
    cfg = config(SpaceConfig("work", ("~/codes",)), path=Path("/etc/lore.toml"))
    with pytest.raises(SpaceError) as info:
        resolve(home / "a", cfg, env_for(home), NO_GIT)
    assert not isinstance(info.value, AmbiguousSpace)
    assert str(home / "a") in info.value.message and "no space matches" in info.value.message
    assert "default_space" in info.value.hint and "/etc/lore.toml" in info.value.hint


def test_default_space(home: Path) -> None:
    cfg = config(SpaceConfig("personal"), default="personal")
    got = resolve(home / "a", cfg, env_for(home), NO_GIT)
    assert (got.space, got.rule, got.pattern) == ("personal", "default", None)
    assert "default_space is personal" in got.reason


def test_worktree_maps_to_main_repository(home: Path, tmp_path: Path) -> None:
    main = home / "codes/acme-api"
    wt = Path(os.path.realpath(tmp_path)) / "wt/feature"
    (wt / "src").mkdir(parents=True)
    git = GitInfo(wt, main)
    cfg = config(SpaceConfig("work", ("~/codes/acme-api",)), SpaceConfig("p"), default="p")
    got = resolve(wt / "src", cfg, env_for(home), git)
    assert (got.space, got.rule, got.pattern) == ("work", "path", "~/codes/acme-api")
    assert "worktree" in got.reason and str(wt) in got.reason
    # the place inside the worktree maps to the same place inside the main repository
    cfg = config(SpaceConfig("src", ("~/codes/acme-api/src",)), SpaceConfig("p"), default="p")
    assert resolve(wt / "src", cfg, env_for(home), git).space == "src"
    assert resolve(wt, cfg, env_for(home), git).space == "p"


def test_path_of_the_worktree_itself_wins_over_main(home: Path) -> None:
    main, wt = home / "codes/acme-api", home / "codes/acme-web"
    cfg = config(SpaceConfig("api", (str(main),)), SpaceConfig("web", (str(wt),)))
    assert resolve(wt, cfg, env_for(home), GitInfo(wt, main)).space == "web"


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:acme/api.git",
        "https://user:tok@GitHub.com/acme/api.git",
        "ssh://git@github.com:22/acme/api",
    ],
)
@pytest.mark.parametrize(
    "pattern", ["github.com/acme/*", "git@github.com:acme/*", "https://github.com/Acme/api"]
)
def test_remote_patterns_match_any_url_form(home: Path, url: str, pattern: str) -> None:
    cfg = config(SpaceConfig("work", remotes=(pattern,)), SpaceConfig("p"), default="p")
    got = resolve(home / "a", cfg, env_for(home), GitInfo(home / "a", home / "a", (url,)))
    assert (got.space, got.rule, got.pattern) == ("work", "remote", pattern)
    assert got.reason == f"git remote github.com/acme/api matches {pattern}"


def test_remote_not_matching_falls_to_default(home: Path) -> None:
    cfg = config(SpaceConfig("work", remotes=("github.com/acme/*",)), SpaceConfig("p"), default="p")
    git = GitInfo(home / "a", home / "a", ("git@github.com:acme-other/api.git",))
    assert resolve(home / "a", cfg, env_for(home), git).space == "p"


def test_path_beats_remote(home: Path) -> None:
    cfg = config(SpaceConfig("work", remotes=("github.com/acme/*",)), SpaceConfig("mine", ("~/a",)))
    git = GitInfo(home / "a", home / "a", ("git@github.com:acme/api.git",))
    assert resolve(home / "a/b", cfg, env_for(home), git).space == "mine"


def test_two_spaces_matching_remotes_is_ambiguous(home: Path) -> None:
    cfg = config(
        SpaceConfig("work", remotes=("github.com/acme/*",)),
        SpaceConfig("oss", remotes=("github.com/*/api",)),
        default="work",
    )
    git = GitInfo(home / "a", home / "a", ("git@github.com:acme/api.git",))
    with pytest.raises(AmbiguousSpace) as info:
        resolve(home / "a", cfg, env_for(home), git)
    msg = info.value.message
    assert "'work'" in msg and "'oss'" in msg and str(home / "a") in msg
    assert "github.com/acme/*" in msg and "github.com/*/api" in msg
    assert "more specific" in info.value.hint


def test_git_is_looked_up_when_not_given(home: Path) -> None:
    repo = home / "codes/acme-api"
    (repo / ".git").mkdir()
    (repo / ".git/config").write_text('[remote "origin"]\n\turl = git@github.com:acme/api.git\n')
    cfg = config(SpaceConfig("work", remotes=("github.com/acme/*",)), SpaceConfig("p"), default="p")
    got = resolve(repo / "src", cfg, env_for(home))
    assert (got.space, got.rule) == ("work", "remote")


def test_resolve_with_parsed_config(home: Path) -> None:
    text = """
default_space = "personal"
[[space]]
id = "personal"
paths = ["~/a"]
[[space]]
id = "work"
paths = ["~/codes/acme-*"]
reads_from = ["personal"]
"""
    cfg = parse_config(text, Path("/cfg.toml"))
    got = resolve(home / "codes/acme-web/src", cfg, env_for(home), NO_GIT)
    assert got.space == "work" and cfg.readable_spaces(got.space) == ("work", "personal")
    assert cfg.readable_spaces(resolve(home / "a/b", cfg, env_for(home), NO_GIT).space) == ("personal",)


def test_a_space_counts_its_longest_matching_path(home: Path) -> None:
    cfg = config(
        SpaceConfig("work", ("~/codes/acme-api", "~/codes")), SpaceConfig("acme", ("~/codes/acme-*",))
    )
    got = resolve(home / "codes/acme-api/src", cfg, env_for(home), NO_GIT)
    assert (got.space, got.pattern) == ("work", "~/codes/acme-api")
    assert resolve(home / "codes/acme-web", cfg, env_for(home), NO_GIT).space == "acme"
