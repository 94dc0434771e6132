"""Paths a memory names that are no longer on disk (docs/design.md, Duplicates and conflicts): a fact
that says `the parser lives in src/old_parser.py` after that file was deleted is stale. Read by the
session start (in the hook: a regular expression and a few `stat` calls per fact naming a path) and
by `lore tidy`. Local mode only: in sign-in mode a path names a directory on the user's machine,
which the server cannot see.

A path is a token with a `/` whose first folder exists where the memory's paths are relative to
(`src/app.py`, `docs/old/`, `bench/run.sh`), or an absolute path inside one of those places; URLs,
hosts (`github.com/o/r`), `~/…`, `../…`, bare file names and `and/or` are left alone. It is gone
when it exists under none of the places it can be relative to: the folder the memory was written
from, that folder's repository top, and the session's own repository (a project moved since).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from lore.core import probes

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.IGNORECASE)
_TOKEN = re.compile(r"(?<![\w~./-])(?:\./)?[\w.-]+(?:/[\w.-]+)+/?|(?<![\w~])/(?:[\w.-]+/)+[\w.-]+")
EXTENSIONS = frozenset(
    """py pyi md rst txt toml json jsonl yaml yml js mjs cjs ts tsx jsx sh bash zsh fish sql go rs rb java kt
    kts c h cc cpp hpp cs html htm css scss sass less lock cfg ini conf xml proto gradle swift php vue
    svelte ex exs erl hs ml mli tf tfvars ipynb csv tsv env mk cmake dockerfile graphql gql lua r jl
    dart scala clj zig nim pl pm""".split()  # noqa: SIM905 (a word list reads better as words)
)
MAX_PATHS = 20  # paths checked per memory


def named_paths(text: str) -> list[str]:
    """The path-like tokens of `text`, in order, each once (at most MAX_PATHS)."""
    out: list[str] = []
    for token in _TOKEN.findall(_URL.sub(" ", text)):
        token = token.rstrip(".,;:")
        if token.startswith("./"):
            token = token[2:]
        if token.startswith(".."):
            continue  # outside the workspace
        first = token.lstrip("/").split("/", 1)[0]
        if not token.startswith("/") and "." in first and not _has_extension(first):
            continue  # github.com/o/r, example.org/path
        if all(part.isdigit() for part in token.strip("/").split("/")):
            continue  # 3/4, 2026/12/03
        if token not in out:
            out.append(token)
        if len(out) >= MAX_PATHS:
            break
    return out


def _has_extension(name: str) -> bool:
    return "." in name and name.rsplit(".", 1)[1].lower() in EXTENSIONS


@lru_cache(maxsize=256)
def repository_top(folder: str) -> str | None:
    """The nearest folder at or above `folder` holding `.git` (file or folder), or None."""
    path = Path(folder)
    for candidate in (path, *path.parents):
        if _lexists(str(candidate / ".git")):
            return str(candidate)
    return None


def bases(written_from: str | None, here: str | None) -> list[str]:
    """The existing folders a memory's relative paths can be relative to: where it was written
    from, that folder's repository top, and the session's repository (`here`)."""
    return list(_bases(written_from, here))


@lru_cache(maxsize=256)
def _bases(written_from: str | None, here: str | None) -> tuple[str, ...]:
    out: list[str] = []
    for folder in (written_from, repository_top(written_from) if written_from else None, here):
        if folder and folder not in out and _isdir(folder):
            out.append(folder)
    return tuple(out)


def gone(
    text: str,
    written_from: str | None,
    here: str | None,
    exists: Callable[[str], bool] | None = None,
) -> list[str]:
    """The paths `text` names inside its workspace that exist nowhere they could be relative to."""
    if "/" not in text:
        return []
    tokens = named_paths(text)
    places = bases(written_from, here) if tokens else []
    if not places:
        return []  # no path, or nothing to look in: cannot tell
    exists = exists or _lexists
    missing = []
    for token in tokens:
        if token.startswith("/"):
            inside = [p for p in places if token.startswith(p.rstrip("/") + "/")]
            if inside and not exists(token):
                missing.append(token)
            continue
        first = token.split("/", 1)[0]
        checked = [p for p in places if _isdir(os.path.join(p, first))]
        if checked and not any(exists(os.path.join(p, token)) for p in checked):
            missing.append(token)
    return missing


def _lexists(path: str) -> bool:
    found = os.path.lexists(path)
    probes.note("exists", path, found)
    return found


def _isdir(path: str) -> bool:
    found = os.path.isdir(path)
    probes.note("isdir", path, found)
    return found


def forget_cache() -> None:
    """Forget which folders exist (a long-running process: once per report)."""
    _bases.cache_clear()
    repository_top.cache_clear()
