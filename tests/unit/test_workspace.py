from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lore.core.workspace import (
    GitInfo,
    WorkspaceSignal,
    choose_workspace,
    git_info,
    is_unhelpful,
    normalise_remote,
    workspace_name,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("git@github.com:acme/api.git", "github.com/acme/api"),
        ("ssh://git@github.com:22/acme/api", "github.com/acme/api"),
        ("https://user:tok@github.com/acme/api.git", "github.com/acme/api"),
        ("https://GitHub.COM/acme/api/", "github.com/acme/api"),
        ("git://gitlab.example.org/group/sub/repo.git", "gitlab.example.org/group/sub/repo"),
        ("ssh://git@[::1]:2222/acme/api.git", "::1/acme/api"),
        ("github.com:acme/api", "github.com/acme/api"),
        ("git+ssh://git@bitbucket.org/team/repo.git", "bitbucket.org/team/repo"),
        ("  git@github.com:acme/api.git\n", "github.com/acme/api"),
        ("/srv/git/api.git", "/srv/git/api"),
        ("file:///srv/git/api.git", "/srv/git/api"),
        ("github.com/acme/*", "github.com/acme/*"),
    ],
)
def test_normalise_remote(url: str, expected: str) -> None:
    assert normalise_remote(url) == expected


def make_main_repo(root: Path) -> Path:
    main = root / "acme-api"
    (main / ".git/worktrees/feature").mkdir(parents=True)
    (main / "src").mkdir()
    (main / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (main / ".git/config").write_text(
        "[core]\n\tbare = false\n"
        '[remote "upstream"]\n\turl = https://github.com/oss/api.git\n'
        '[Remote "origin"]\n\turl = "git@github.com:acme/api.git" ; comment\n'
        '\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n'
    )
    return main


def test_git_info_plain_repo(tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path))
    main = make_main_repo(root)
    info = git_info(main / "src")
    assert info == GitInfo(main, main, ("git@github.com:acme/api.git", "https://github.com/oss/api.git"))
    assert not info.is_worktree
    assert workspace_name(main / "src", info) == "acme-api"


def test_git_info_fake_worktree(tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path))
    main = make_main_repo(root)
    wt = root / "elsewhere/feature-x"
    (wt / "pkg").mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {main / '.git/worktrees/feature'}\n")
    (main / ".git/worktrees/feature/commondir").write_text("../..\n")
    (main / ".git/worktrees/feature/gitdir").write_text(f"{wt / '.git'}\n")
    info = git_info(wt / "pkg")
    assert info is not None
    assert (info.toplevel, info.main_toplevel) == (wt, main)
    assert info.is_worktree
    assert info.remotes[0] == "git@github.com:acme/api.git"
    assert workspace_name(wt / "pkg", info) == "acme-api"


def test_git_info_relative_gitdir_submodule(tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path))
    main = make_main_repo(root)
    sub = main / "vendor/lib"
    sub.mkdir(parents=True)
    (main / ".git/modules/lib").mkdir(parents=True)
    (main / ".git/modules/lib/config").write_text(  # as `git submodule add` writes it
        '[core]\n\tworktree = ../../../vendor/lib\n[remote "origin"]\nurl = https://github.com/x/lib\n'
    )
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    info = git_info(sub)
    assert info == GitInfo(sub, sub, ("https://github.com/x/lib",))
    assert workspace_name(sub, info) == "lib"


def test_git_info_outside_git(tmp_path: Path) -> None:
    plain = Path(os.path.realpath(tmp_path)) / "plain dir"
    plain.mkdir()
    assert git_info(plain) is None
    assert workspace_name(plain, None) == "plain dir"
    assert workspace_name(Path("/"), None) == "/"


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_info_real_worktree(tmp_path: Path) -> None:
    root = Path(os.path.realpath(tmp_path))
    main, wt = root / "shop-api", root / "trees/shop-api-fix"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(root),
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=main, env=env, check=True, capture_output=True)

    main.mkdir()
    git("init", "-q")
    git("remote", "add", "origin", "git@github.com:Shop/API.git")
    git("commit", "-q", "--allow-empty", "-m", "init")
    git("worktree", "add", "-q", str(wt))
    (wt / "deep").mkdir()

    info = git_info(wt / "deep")
    assert info == GitInfo(wt, main, ("git@github.com:Shop/API.git",))
    assert workspace_name(wt / "deep", info) == "shop-api"
    assert normalise_remote(info.remotes[0]) == "github.com/Shop/API"
    assert git_info(main) == GitInfo(main, main, ("git@github.com:Shop/API.git",))


def test_signal_order(tmp_path: Path) -> None:
    a, b, c, d = (str(tmp_path / n) for n in "abcd")
    env = {"CLAUDE_PROJECT_DIR": b, "GEMINI_PROJECT_DIR": c}
    roots = [Path(d).as_uri()]
    assert choose_workspace(a, env, roots, "/") == WorkspaceSignal(Path(a), "--workspace")
    assert choose_workspace(None, env, roots, "/") == WorkspaceSignal(Path(b), "env CLAUDE_PROJECT_DIR")
    assert choose_workspace(None, {"GEMINI_PROJECT_DIR": c}, roots, "/") == WorkspaceSignal(
        Path(c), "env GEMINI_PROJECT_DIR"
    )
    assert choose_workspace(None, {}, roots, "/") == WorkspaceSignal(Path(d), "MCP roots")
    assert choose_workspace(None, {}, [], a) == WorkspaceSignal(Path(a), "cwd")


@pytest.mark.parametrize("placeholder", ["${workspaceFolder}", "", "   ", "$CLAUDE_PROJECT_DIR"])
def test_unexpanded_or_empty_signals_are_ignored(placeholder: str, tmp_path: Path) -> None:
    env = {"CLAUDE_PROJECT_DIR": placeholder, "WORKSPACE_FOLDER_PATHS": placeholder}
    got = choose_workspace(placeholder, env, [], str(tmp_path))
    assert got == WorkspaceSignal(tmp_path, "cwd")


def test_cursor_workspace_folder_paths_takes_the_first(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    for value in (f"{first}{os.pathsep}{second}", f"{first},{second}", str(first)):
        got = choose_workspace(None, {"WORKSPACE_FOLDER_PATHS": value}, [], "/")
        assert got == WorkspaceSignal(first, "env WORKSPACE_FOLDER_PATHS")


def test_roots_are_decoded_and_non_file_roots_skipped(tmp_path: Path) -> None:
    spaced = tmp_path / "my project"
    roots = ["https://example.com/x", "file://" + str(spaced).replace(" ", "%20")]
    assert choose_workspace(None, {}, roots, "/") == WorkspaceSignal(spaced, "MCP roots")
    assert choose_workspace(None, {}, ["file://localhost/srv/x"], "/").path == Path("/srv/x")


def test_signal_paths_are_made_absolute(tmp_path: Path) -> None:
    got = choose_workspace("sub/../proj", {}, [], str(tmp_path))
    assert got == WorkspaceSignal(tmp_path / "proj", "--workspace")
    got = choose_workspace("~/proj", {"HOME": "/home/u"}, [], "/")
    assert got.path == Path("/home/u/proj")


def test_is_unhelpful(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert is_unhelpful(Path("/"), env)
    assert is_unhelpful(tmp_path, env)
    assert not is_unhelpful(tmp_path / "proj", env)
    assert not is_unhelpful(Path("/usr"), env)
