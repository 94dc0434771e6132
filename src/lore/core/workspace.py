"""Where a session's workspace comes from, and what git says about it (docs/design.md, Spaces).

Runs in the session-start hook, so it never spawns git: the repository, its worktrees and its remotes
are read from the files under `.git`. Those files are the repository's, which may be hostile (an
unpacked archive, a shared tree): each is read only when it is a regular file, without blocking (a
FIFO is not waited on) and at most MAX_GIT_FILE bytes (a config linked to /dev/zero is not read
without end). A link to another git directory (a worktree's or a submodule's `.git` file, a
`commondir`, `core.worktree`) counts only when the other side points back to this checkout: a fake
worktree cannot borrow another repository's main checkout or remotes, nor its space.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard
from urllib.parse import unquote, urlsplit

from lore.core import files, probes
from lore.core.config import expand_user
from lore.core.errors import InvalidInput

CLIENT_ENV_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "WORKSPACE_FOLDER_PATHS")


@dataclass(frozen=True)
class GitInfo:
    toplevel: Path  # the working tree that contains the path (a worktree's own directory)
    main_toplevel: Path  # the main repository's working tree (== toplevel unless a worktree)
    remotes: tuple[str, ...] = ()  # remote URLs as configured, origin first

    @property
    def is_worktree(self) -> bool:
        return self.main_toplevel != self.toplevel


# The longest workspace path lore takes (Linux's PATH_MAX); a longer one is not a directory.
MAX_WORKSPACE = 4096


@dataclass(frozen=True)
class WorkspaceSignal:
    """Where a session is, and who said so. Every entry point (the hooks, `--workspace`, MCP roots and
    the X-Lore-Workspace header, `/api`'s `workspace`, the web page's `lore which`) builds one, so the
    path's check lives here, once: a path over MAX_WORKSPACE characters or with a control character
    (a NUL, a newline, an escape) names no directory and is refused before anything reads it."""

    path: Path
    source: str  # "--workspace", "env CLAUDE_PROJECT_DIR", "MCP roots", "cwd"

    def __post_init__(self) -> None:
        check_path(str(self.path), self.source)


def is_path(value: str) -> bool:
    """Whether `value` can name a directory: at most MAX_WORKSPACE characters, no control character."""
    return len(value) <= MAX_WORKSPACE and not any(ord(ch) < 32 or ord(ch) == 127 for ch in value)


def check_path(value: str, source: str = "the workspace") -> str:
    """`value` when it can name a directory; InvalidInput (what, and what to do) when it cannot."""
    if not is_path(value):
        raise InvalidInput(
            f"the workspace ({source}) is not a directory path (over {MAX_WORKSPACE:,} characters, "
            "or a control character)",
            "name the directory the agent works in (an absolute path)",
        )
    return value


# The most of one git file (`.git`, `commondir`, `gitdir`, `config`) lore reads; a larger one is
# ignored, as if absent. A real config is a few KiB.
MAX_GIT_FILE = 256 * 1024


def git_info(path: Path) -> GitInfo | None:
    """The git repository enclosing `path` (resolved), or None outside git. Reads files only."""
    start = Path(os.path.realpath(path))
    probes.note("realpath", str(path), str(start))
    for directory in (start, *start.parents):
        dotgit = directory / ".git"
        try:
            mode = os.stat(dotgit).st_mode
        except OSError:
            probes.note("mode", str(dotgit), None)
            continue
        probes.note("mode", str(dotgit), mode & 0o170000)
        if stat.S_ISDIR(mode):
            return _describe(directory, dotgit)
        if stat.S_ISREG(mode):
            gitdir = _read_gitdir_file(dotgit)
            if gitdir is None or not _points_back(gitdir, dotgit, directory):
                # a broken or foreign link: still this checkout's root, nothing more believed
                return GitInfo(directory, directory)
            return _describe(directory, gitdir)
        return GitInfo(directory, directory)  # a `.git` that is neither (a FIFO, a device): no more
    return None


def normalise_remote(url: str) -> str:
    """`git@github.com:acme/api.git`, `ssh://git@github.com:22/acme/api`,
    `https://user:tok@github.com/acme/api.git` -> `github.com/acme/api` (host lowercased)."""
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if sep:
        if scheme.lower() == "file":
            return _strip_git(unquote(urlsplit(url).path))
        authority, _, repo = rest.partition("/")
    elif _is_scp_like(url):
        authority, _, repo = url.partition(":")
    else:  # a local path, or an already normalised `host/owner/repo` (config patterns)
        return _strip_git(url)
    host = authority.rpartition("@")[2]
    host = host[1 : host.find("]")] if host.startswith("[") else host.partition(":")[0]
    repo = "/".join(part for part in repo.split("/") if part)
    return f"{host.lower()}/{_strip_git(repo)}"


def workspace_name(path: Path, git: GitInfo | None) -> str:
    """Basename of the git top-level (a worktree maps to its main repository), else of the directory."""
    if git is not None:
        name = git.main_toplevel.name
        return (name.removesuffix(".git") or name) if git.is_worktree else name
    absolute = Path(os.path.abspath(path))
    return absolute.name or str(absolute)


def choose_workspace(
    arg: str | None, env: Mapping[str, str], roots: Sequence[str], cwd: str
) -> WorkspaceSignal:
    """The first usable signal: --workspace, the client's env, the first MCP root, the working dir.

    Empty values and unexpanded placeholders (`${workspaceFolder}`) are not signals: they mean the
    client did not fill them in. `roots` are the `file://` URIs from `roots/list`, as strings.
    """
    base = cwd or os.getcwd()
    if _usable(arg):
        return WorkspaceSignal(_absolute(arg, base, env), "--workspace")
    for var in CLIENT_ENV_VARS:
        value = env.get(var)
        if value and var == "WORKSPACE_FOLDER_PATHS":
            value = _first_path(value)
        if _usable(value):
            return WorkspaceSignal(_absolute(value, base, env), f"env {var}")
    for root in roots:
        root_path = _root_path(root)
        if _usable(root_path):
            return WorkspaceSignal(_absolute(root_path, base, env), "MCP roots")
    return WorkspaceSignal(Path(os.path.normpath(os.path.abspath(base))), "cwd")


def command_signal(workspace: str | None, env: Mapping[str, str], cwd: str) -> WorkspaceSignal:
    """Where a `lore` command speaks for: `--workspace DIR` (made absolute against `cwd`, `~`
    expanded) if given, else the same signals as `lore mcp` (the client's variables, then `cwd`).
    One rule for every command, local or on a client of a server."""
    if workspace:
        path = os.path.abspath(os.path.join(cwd, os.path.expanduser(workspace)))
        return WorkspaceSignal(Path(path), "--workspace")
    return choose_workspace(None, env, [], cwd)


def is_unhelpful(path: Path, env: Mapping[str, str] | None = None) -> bool:
    """True for `/` (or a drive root) and the home directory: what a client with no signal gives."""
    real = Path(os.path.realpath(path))
    return real.parent == real or real == Path(os.path.realpath(expand_user("~", env)))


# --- helpers ------------------------------------------------------------------------------------


def _describe(toplevel: Path, gitdir: Path) -> GitInfo:
    common = gitdir  # not a worktree: the git dir is its own common dir
    named = _read_small(gitdir / "commondir")
    if named is not None and named.strip():
        linked = Path(os.path.realpath(gitdir / named.strip()))
        # a worktree's git dir lives in its common dir's `worktrees/`: anything else is not believed
        if gitdir.parent == linked / "worktrees":
            common = linked
        else:
            return GitInfo(toplevel, toplevel)
    remotes, core_worktree = _read_git_config(common / "config")
    if common == gitdir:
        main = toplevel
    elif core_worktree:
        main = Path(os.path.realpath(common / core_worktree))
        if not _checkout_of(main, common):  # core.worktree names a checkout that is not this repo's
            return GitInfo(toplevel, toplevel)
    elif common.name == ".git":
        main = common.parent
    else:  # a worktree of a bare repository: the bare directory stands for the main repository
        main = common
    return GitInfo(toplevel, main, remotes)


def _read_small(path: Path) -> str | None:
    """A git file's text: only a regular file, never waited on, at most MAX_GIT_FILE bytes (a larger
    one counts as unreadable); None when it cannot be read so."""
    probes.look("stat", str(path))
    try:
        data = files.read_regular(path, MAX_GIT_FILE)  # its type checked before it is opened
    except OSError:  # missing, not a regular file, too large, unreadable
        return None
    return data.decode("utf-8", errors="replace")


def _read_gitdir_file(dotgit: Path) -> Path | None:
    text = _read_small(dotgit)
    if text is None:
        return None
    key, _, value = text.partition("\n")[0].partition(":")
    if key.strip() != "gitdir" or not value.strip():
        return None
    gitdir = Path(os.path.realpath(dotgit.parent / value.strip()))
    return gitdir if gitdir.is_dir() else None


def _points_back(gitdir: Path, dotgit: Path, checkout: Path) -> bool:
    """Whether the git dir a `.git` file names knows this checkout: a worktree's git dir has a
    `gitdir` file naming this `.git` file; a submodule's (and a separate git dir's) config has a
    `core.worktree` naming this checkout."""
    named = _read_small(gitdir / "gitdir")
    if named is not None and named.strip():
        return os.path.realpath(gitdir / named.strip()) == os.path.realpath(dotgit)
    _, core_worktree = _read_git_config(gitdir / "config")
    if core_worktree:
        return os.path.realpath(gitdir / core_worktree) == os.path.realpath(checkout)
    return False


def _checkout_of(main: Path, common: Path) -> bool:
    """Whether `main` is the checkout of the git dir `common`: its `.git` is `common` itself, or a
    file naming it."""
    dotgit = main / ".git"
    if os.path.realpath(dotgit) == os.path.realpath(common):
        return True
    linked = _read_gitdir_file(dotgit) if os.path.isfile(dotgit) else None
    return linked is not None and os.path.realpath(linked) == os.path.realpath(common)


def _read_git_config(config: Path) -> tuple[tuple[str, ...], str | None]:
    """(remote URLs with origin's first, core.worktree) from a git config file."""
    text = _read_small(config)
    if text is None:
        return (), None
    section, subsection = "", ""
    urls: list[tuple[str, str]] = []
    worktree = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            header = line[1 : line.find("]")] if "]" in line else line[1:]
            name, _, sub = header.strip().partition(" ")
            if not sub and "." in name:  # legacy [remote.origin]
                name, _, sub = name.partition(".")
            section, subsection = name.lower(), sub.strip().strip('"')
            continue
        key, _, value = line.partition("=")
        key = key.strip().lower()
        if section == "remote" and key == "url":
            urls.append((subsection, _git_value(value)))
        elif section == "core" and not subsection and key == "worktree":
            worktree = _git_value(value)
    ordered = [u for name, u in urls if name == "origin"] + [u for name, u in urls if name != "origin"]
    return tuple(dict.fromkeys(u for u in ordered if u)), worktree


def _git_value(raw: str) -> str:
    out: list[str] = []
    quoted, escaped = False, False
    for char in raw:
        if escaped:
            out.append({"n": "\n", "t": "\t"}.get(char, char))
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            out.append(char)
    return "".join(out).strip()


def _is_scp_like(url: str) -> bool:
    """`[user@]host:path`: a colon before any slash (and not a Windows drive letter)."""
    colon, slash = url.find(":"), url.find("/")
    return colon > 1 and (slash == -1 or colon < slash)


def _strip_git(path: str) -> str:
    path = path.rstrip("/")
    return path.removesuffix(".git").rstrip("/") if path.endswith(".git") else path


def usable(value: str | None) -> TypeGuard[str]:
    """A workspace signal worth using: not empty, not an unexpanded `${VAR}` placeholder."""
    return _usable(value)


def _usable(value: str | None) -> TypeGuard[str]:
    return (
        value is not None and bool(value.strip()) and "${" not in value and not value.strip().startswith("$")
    )


def _first_path(value: str) -> str:
    """Cursor's WORKSPACE_FOLDER_PATHS may list several folders (os.pathsep or ','): the first."""
    value = value.strip()
    if os.path.isdir(value):
        return value
    for sep in (os.pathsep, ","):
        if sep in value:
            value = next((part.strip() for part in value.split(sep) if part.strip()), "")
            if os.path.isdir(value):
                break
    return value


def _root_path(uri: str) -> str | None:
    if uri.startswith("file:"):
        parts = urlsplit(uri)
        if parts.netloc not in ("", "localhost"):
            return None
        path = unquote(parts.path)
        if len(path) >= 3 and path[0] == "/" and path[2] == ":":  # file:///C:/x on Windows
            path = path[1:]
        return path or None
    return uri if os.path.isabs(uri) else None


def _absolute(value: str, base: str, env: Mapping[str, str]) -> Path:
    expanded = expand_user(value.strip(), env)
    return Path(os.path.normpath(os.path.join(base, expanded)))


def find_moved(
    lost: str, home: Path, *, remotes: Sequence[str] = (), seconds: float = 2.0, depth: int = 4
) -> list[Path]:
    """Where a configured directory that is gone may have moved: directories under `home` named
    like it, or git checkouts whose remote matches one of `remotes` (the space's patterns), at most
    `depth` levels down, not into hidden or dependency folders; git checkouts first. Bounded in
    time: what `seconds` did not reach is not looked at."""
    import time

    name = Path(lost.rstrip("/*")).name
    patterns = [normalise_remote(p).lower() for p in remotes]
    if not name and not patterns:
        return []
    deadline = time.monotonic() + seconds
    found: list[Path] = []
    level = [home]
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            if time.monotonic() > deadline:
                return _checkouts_first(found)
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        if not entry.is_dir(follow_symlinks=False) or entry.name.startswith("."):
                            continue
                        if entry.name in _NOT_SEARCHED:
                            continue
                        path = Path(entry.path)
                        if entry.name == name or (patterns and _remote_matches(path, patterns)):
                            found.append(path)
                        below.append(path)
            except OSError:
                continue
        level = below
    return _checkouts_first(found)


_NOT_SEARCHED = frozenset({"node_modules", "site-packages", "venv", "__pycache__", "Library"})


def _remote_matches(path: Path, patterns: Sequence[str]) -> bool:
    from fnmatch import fnmatchcase  # doctor only: kept off the hook's import path

    if not os.path.isdir(path / ".git"):
        return False
    git = git_info(path)
    remotes = [normalise_remote(url).lower() for url in (git.remotes if git else ())]
    return any(fnmatchcase(r, p) for r in remotes for p in patterns)


def _checkouts_first(found: list[Path]) -> list[Path]:
    return sorted(found, key=lambda p: (not (p / ".git").exists(), str(p)))[:3]
