"""Trust rounds 3 (item 3) and 4 (item 2): a hostile repository (an unpacked archive, a shared tree,
an agent that can write `.git`) against lore's two readers of git.

- The session-end hook runs `git status` and `git diff --stat` (lore.core.capture.git_changes) at
  the end of every agent turn, outside any agent sandbox: 6 of 11 ways to make git run a program
  from the repository's own files ran; in round 4, 5 more through a partial clone's lazy fetch of a
  missing object. Each vector below writes a marker when its program runs.
- Workspace resolution reads `.git` files itself (lore.core.workspace): a FIFO froze it, a config
  linked to /dev/zero was read without end, and a fake worktree made a directory resolve into
  another project's space.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lore.core import capture
from lore.core.config import parse_config
from lore.core.spaces import resolve
from lore.core.workspace import git_info


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def program(tmp: Path, name: str) -> tuple[Path, Path]:
    """A script that marks that it ran (and passes its input through, as a filter must)."""
    marker = tmp / f"ran-{name}"
    script = tmp / f"evil-{name}.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\ncat\n")
    script.chmod(0o755)
    return script, marker


def repo(tmp: Path, name: str = "r") -> Path:
    where = tmp / name
    where.mkdir()
    git(where, "init", "-q")
    git(where, "config", "user.email", "a@b")
    git(where, "config", "user.name", "a")
    (where / "a.txt").write_text("one\n")
    git(where, "add", "a.txt")
    git(where, "commit", "-qm", "init")
    (where / "a.txt").write_text("two\n")  # a change: status and diff must look at the file
    old = time.time() - 3600
    os.utime(where / "a.txt", (old, old))  # racy-clean no more: git must re-read (and filter) it
    return where


def fsmonitor(tmp: Path, r: Path, script: Path) -> Path:
    git(r, "config", "core.fsmonitor", str(script))
    return r


def fsmonitor_through_gitfile(tmp: Path, r: Path, script: Path) -> Path:
    """The checkout's `.git` is a file naming a git dir elsewhere whose config runs the program."""
    (r / ".git").rename(tmp / "elsewhere.git")
    git(tmp / "elsewhere.git", "config", "core.worktree", str(r))
    git(tmp / "elsewhere.git", "config", "core.fsmonitor", str(script))
    (r / ".git").write_text(f"gitdir: {tmp / 'elsewhere.git'}\n")
    return r


def fsmonitor_through_include(tmp: Path, r: Path, script: Path) -> Path:
    (r / "included.cfg").write_text(f"[core]\n\tfsmonitor = {script}\n")
    git(r, "config", "include.path", str(r / "included.cfg"))
    return r


def fsmonitor_in_a_submodule(tmp: Path, r: Path, script: Path) -> Path:
    lib = repo(tmp, "lib")
    git(r, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    git(r, "commit", "-qm", "sub")
    (r / "lib" / "a.txt").write_text("changed in the submodule\n")
    git(r / "lib", "config", "core.fsmonitor", str(script))
    return r


def clean_filter(tmp: Path, r: Path, script: Path) -> Path:
    (r / ".gitattributes").write_text("*.txt filter=evil\n")
    git(r, "config", "filter.evil.clean", str(script))
    return r


def process_filter(tmp: Path, r: Path, script: Path) -> Path:
    (r / ".gitattributes").write_text("*.txt filter=evil\n")
    git(r, "config", "filter.evil.process", str(script))
    return r


def filter_with_an_odd_name(tmp: Path, r: Path, script: Path) -> Path:
    """A driver whose name has `=` and a dot (no `-c name=value` could switch it off), in an include."""
    (r / ".gitattributes").write_text("*.txt filter=a=b.c\n")
    (r / "inc.cfg").write_text(f'[filter "a=b.c"]\n\tclean = {script}\n\trequired = true\n')
    git(r, "config", "include.path", str(r / "inc.cfg"))
    return r


def textconv(tmp: Path, r: Path, script: Path) -> Path:
    (r / ".gitattributes").write_text("*.txt diff=evil\n")
    git(r, "config", "diff.evil.textconv", str(script))
    return r


def external_diff(tmp: Path, r: Path, script: Path) -> Path:
    git(r, "config", "diff.external", str(script))
    return r


def pager(tmp: Path, r: Path, script: Path) -> Path:
    git(r, "config", "core.pager", str(script))
    git(r, "config", "pager.status", "true")
    return r


def index_hook(tmp: Path, r: Path, script: Path) -> Path:
    """post-index-change runs when git writes the index, which a status may do."""
    hooks = r / "hooks"
    hooks.mkdir()
    (hooks / "post-index-change").write_text(script.read_text())
    (hooks / "post-index-change").chmod(0o755)
    git(r, "config", "core.hooksPath", str(hooks))
    return r


def _partial_clone(r: Path, url: str) -> Path:
    """`r` as a partial clone whose promisor remote is `url`, with the blob `git diff HEAD` needs
    (a.txt as committed) missing: git would fetch it from the remote."""
    blob = subprocess.run(
        ["git", "-C", str(r), "rev-parse", "HEAD:a.txt"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (r / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    git(r, "config", "core.repositoryformatversion", "1")
    git(r, "config", "extensions.partialClone", "origin")
    git(r, "config", "remote.origin.promisor", "true")
    git(r, "config", "remote.origin.url", url)
    return r


def lazy_fetch_ssh_command(tmp: Path, r: Path, script: Path) -> Path:
    """Trust round 4: the missing object is fetched over ssh with the repository's core.sshCommand."""
    git(r, "config", "core.sshCommand", str(script))
    return _partial_clone(r, "ssh://example.invalid/repo.git")


def lazy_fetch_ext_remote(tmp: Path, r: Path, script: Path) -> Path:
    """An `ext::` remote runs its command; the repository allows the protocol itself."""
    git(r, "config", "protocol.ext.allow", "always")
    return _partial_clone(r, f"ext::{script} %S")


def lazy_fetch_upload_pack(tmp: Path, r: Path, script: Path) -> Path:
    """A local remote (file://, allowed by default) runs the repository's remote.origin.uploadpack."""
    git(r, "config", "remote.origin.uploadpack", str(script))
    upstream = tmp / "upstream.git"
    subprocess.run(["git", "init", "-q", "--bare", str(upstream)], check=True)
    return _partial_clone(r, f"file://{upstream}")


def lazy_fetch_git_proxy(tmp: Path, r: Path, script: Path) -> Path:
    """A git:// remote connects through the repository's core.gitProxy."""
    git(r, "config", "core.gitProxy", str(script))
    return _partial_clone(r, "git://example.invalid/repo.git")


def lazy_fetch_through_include(tmp: Path, r: Path, script: Path) -> Path:
    """The promisor remote and its command in an included file (read like the repository's own)."""
    (r / "fetch.cfg").write_text(f"[core]\n\tsshCommand = {script}\n")
    git(r, "config", "include.path", str(r / "fetch.cfg"))
    return _partial_clone(r, "ssh://example.invalid/repo.git")


VECTORS: dict[str, Callable[[Path, Path, Path], Path]] = {
    "fsmonitor": fsmonitor,
    "fsmonitor through a .git file": fsmonitor_through_gitfile,
    "fsmonitor through include.path": fsmonitor_through_include,
    "fsmonitor in a submodule": fsmonitor_in_a_submodule,
    "clean filter": clean_filter,
    "process filter": process_filter,
    "filter named a=b.c in an include": filter_with_an_odd_name,
    "textconv": textconv,
    "external diff": external_diff,
    "pager": pager,
    "post-index-change hook": index_hook,
    "lazy fetch: core.sshCommand": lazy_fetch_ssh_command,
    "lazy fetch: ext:: remote": lazy_fetch_ext_remote,
    "lazy fetch: remote.origin.uploadpack": lazy_fetch_upload_pack,
    "lazy fetch: core.gitProxy": lazy_fetch_git_proxy,
    "lazy fetch: core.sshCommand in an include": lazy_fetch_through_include,
}


@pytest.mark.parametrize("vector", list(VECTORS))
def test_the_session_end_capture_runs_no_program_of_the_repository(tmp_path: Path, vector: str) -> None:
    script, marker = program(tmp_path, "x")
    root = VECTORS[vector](tmp_path, repo(tmp_path), script)
    changes = capture.git_changes(root, timeout=5)
    assert not marker.exists(), f"{vector}: the repository's program ran"
    assert changes is not None and any("a.txt" in line for line in changes.lines), changes  # still works


def test_git_that_hangs_is_killed_with_everything_it_started(tmp_path: Path) -> None:
    """A FIFO as the repository's config: git blocks on it; on the deadline its whole process group
    goes (before, only git was killed: what it had started lived on)."""
    r = repo(tmp_path)
    (r / ".git" / "config").unlink()
    os.mkfifo(r / ".git" / "config")
    started = time.monotonic()
    assert capture.git_changes(r, timeout=0.5) is None
    assert time.monotonic() - started < 3
    left = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cwd_is(p, r)]
    assert left == [], left


def _cwd_is(proc: Path, where: Path) -> bool:
    try:
        cmdline = (proc / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return str(where).encode() in cmdline and cmdline[0].endswith(b"git")


# --- workspace resolution -------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["config", "commondir"])
def test_a_fifo_in_git_files_never_blocks_resolution(tmp_path: Path, name: str) -> None:
    r = repo(tmp_path)
    if name == "commondir":  # a worktree's git dir names its common dir in `commondir`
        wt = tmp_path / "wt"
        git(r, "worktree", "add", "-q", str(wt))
        gitdir = r / ".git" / "worktrees" / "wt"
        (gitdir / "commondir").unlink()
        os.mkfifo(gitdir / "commondir")
        target = wt
    else:
        (r / ".git" / "config").unlink()
        os.mkfifo(r / ".git" / "config")
        target = r
    started = time.monotonic()
    info = git_info(target)
    assert time.monotonic() - started < 1 and info is not None and info.remotes == ()


def test_a_config_linked_to_dev_zero_or_huge_is_not_read(tmp_path: Path) -> None:
    r = repo(tmp_path)
    config = r / ".git" / "config"
    config.unlink()
    config.symlink_to("/dev/zero")
    started = time.monotonic()
    assert git_info(r) is not None and time.monotonic() - started < 1
    config.unlink()
    with open(config, "wb") as handle:  # 430 MB (sparse): ignored, not read into memory
        handle.truncate(430 * 1024 * 1024)
    started = time.monotonic()
    info = git_info(r)
    assert info is not None and info.remotes == () and time.monotonic() - started < 1


def _claimed(tmp_path: Path) -> tuple[Path, Path, str]:
    """A project with its space, and an attacker's directory outside every configured path."""
    project = repo(tmp_path, "project")
    git(project, "remote", "add", "origin", "git@github.com:acme/secret.git")
    evil = tmp_path / "unpacked"
    evil.mkdir()
    toml = (
        'default_space = "personal"\n[[space]]\nid = "personal"\npaths = []\n'
        f'[[space]]\nid = "secret"\npaths = ["{project}"]\nremotes = []\n'
    )
    return project, evil, toml


def test_a_fake_worktree_cannot_claim_another_projects_space(tmp_path: Path) -> None:
    project, evil, toml = _claimed(tmp_path)
    config = parse_config(toml, tmp_path / "c.toml")
    # a `.git` file naming a fake worktree git dir whose commondir is the project's .git
    fake = tmp_path / "fakegit"
    fake.mkdir()
    (fake / "commondir").write_text(f"{project / '.git'}\n")
    (evil / ".git").write_text(f"gitdir: {fake}\n")
    assert resolve(evil, config, {}, git_info(evil)).space == "personal"
    # a `.git` file naming the project's own git dir
    (evil / ".git").write_text(f"gitdir: {project / '.git'}\n")
    assert resolve(evil, config, {}, git_info(evil)).space == "personal"
    # a git dir of its own whose core.worktree names the project
    (evil / ".git").unlink()
    (evil / ".git").mkdir()
    (evil / ".git" / "config").write_text(f"[core]\n\tworktree = {project}\n")
    (evil / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    wt_dir = project / ".git" / "worktrees" / "x"
    wt_dir.mkdir(parents=True)
    (wt_dir / "commondir").write_text(f"{evil / '.git'}\n")
    (evil / "sub").mkdir()
    (evil / "sub" / ".git").write_text(f"gitdir: {wt_dir}\n")
    assert resolve(evil / "sub", config, {}, git_info(evil / "sub")).space == "personal"
    # while a real worktree of the project still maps to it
    real = tmp_path / "real-wt"
    git(project, "worktree", "add", "-q", str(real))
    info = git_info(real)
    assert info is not None and info.main_toplevel == project and info.remotes
    assert resolve(real, config, {}, info).space == "secret"
