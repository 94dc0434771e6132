"""Which space a workspace belongs to, and why (docs/design.md, Spaces).

`resolve` is the one function the MCP server, the hook, the CLI and the HTTP server all call. Order:

1. `LORE_SPACE`, which must name a configured space;
2. the longest configured path matching the workspace (the directory itself or anything beneath it;
   `~` expands; a trailing `*` is a plain string prefix; symlinks resolved on both sides), then, for a
   git worktree that nothing matched, the same for the matching place in its main repository;
3. a `remotes` pattern matching one of the workspace's normalised git remotes;
4. `default_space`.

Two spaces matching equally well is an `AmbiguousSpace` error, never a guess.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from lore.core.config import Config, expand_user
from lore.core.errors import AmbiguousSpace, SpaceError
from lore.core.workspace import GitInfo, git_info, normalise_remote

RULES = ("env", "path", "remote", "default")


@dataclass(frozen=True)
class Resolved:
    space: str
    rule: str  # one of RULES
    pattern: str | None  # the configured path or remote pattern that matched, as written
    workspace: Path
    reason: str  # one sentence: why this space


@dataclass(frozen=True)
class _Hit:
    space: str
    pattern: str
    length: int
    target: str  # the normalised remote a remote pattern matched ("" for paths)


def resolve(
    workspace: Path,
    config: Config,
    env: Mapping[str, str],
    git: GitInfo | None = None,
    *,
    lexical: bool = False,
) -> Resolved:
    """The session space for `workspace`. `git=None` means: look it up if a later rule needs it,
    unless `lexical`: then paths are compared as written and the disk is never looked at (the
    workspace is on another machine: sign-in mode)."""
    ws = Path(os.path.normpath(os.path.abspath(expand_user(str(workspace), env))))
    file = _file(config)

    forced = env.get("LORE_SPACE", "").strip()
    if forced:
        if config.space(forced) is None:
            known = ", ".join(config.ids) or "(none configured)"
            raise SpaceError(
                f"LORE_SPACE={forced} names no configured space (known: {known})",
                f'set LORE_SPACE to a known space, unset it, or add [[space]] id = "{forced}" to {file}',
            )
        return Resolved(forced, "env", None, ws, f"LORE_SPACE={forced} is set in the environment")

    hit = _best_path(ws, ws, config, env, lexical)
    if hit is not None:
        return Resolved(hit.space, "path", hit.pattern, ws, f"path {hit.pattern} matches {ws}")

    if git is None and not lexical:
        git = git_info(ws)
    if git is not None and git.is_worktree:
        real = Path(os.path.realpath(ws))
        inside = real.relative_to(git.toplevel) if real.is_relative_to(git.toplevel) else Path()
        mapped = git.main_toplevel / inside
        hit = _best_path(mapped, ws, config, env)
        if hit is not None:
            reason = f"path {hit.pattern} matches {mapped}, the main repository of worktree {git.toplevel}"
            return Resolved(hit.space, "path", hit.pattern, ws, reason)

    if git is not None and git.remotes:
        hit = _remote_match(ws, git, config)
        if hit is not None:
            return Resolved(
                hit.space, "remote", hit.pattern, ws, f"git remote {hit.target} matches {hit.pattern}"
            )

    if config.default_space:
        reason = f"no path or remote matches {ws}; default_space is {config.default_space}"
        return Resolved(config.default_space, "default", None, ws, reason)
    raise SpaceError(
        f"no space matches workspace {ws}: no configured path or remote covers it, and no default_space",
        f'add the directory to a space\'s paths, or set default_space = "..." in {file}',
    )


# --- path rule ----------------------------------------------------------------------------------


def _best_path(
    target: Path, ws: Path, config: Config, env: Mapping[str, str], lexical: bool = False
) -> _Hit | None:
    dirs, children = _anchors(target, lexical)
    best: dict[str, _Hit] = {}
    for space in config.spaces:
        for pattern in space.paths:
            length = _match_length(pattern, env, dirs, children, lexical)
            if length is not None and (space.id not in best or length > best[space.id].length):
                best[space.id] = _Hit(space.id, pattern, length, "")
    if not best:
        return None
    top = max(h.length for h in best.values())
    tied = [h for h in best.values() if h.length == top]
    if len(tied) > 1:
        raise AmbiguousSpace(
            f"workspace {ws} matches {_names(tied, 'path')} equally well",
            f"make one path more specific (or remove one) in {_file(config)} "
            "so that a single space has the longest match",
        )
    return tied[0]


def _anchors(target: Path, only_lexical: bool = False) -> tuple[set[str], dict[str, set[str]]]:
    """Every ancestor of `target` (itself included), lexical and resolved, as real directories, and
    the names found under each real parent. Resolving each lexical ancestor lets a symlinked project
    directory still match a `*` pattern written for where the link lives. `only_lexical`: the path
    as written, resolved nowhere."""
    dirs: set[str] = set()
    children: dict[str, set[str]] = {}
    lexical = Path(os.path.normpath(os.path.abspath(target)))
    chains: list[tuple[tuple[Path, ...], bool]] = [((lexical, *lexical.parents), only_lexical)]
    if not only_lexical:
        resolved = Path(os.path.realpath(lexical))
        chains.append(((resolved, *resolved.parents), True))
    for chain, is_real in chains:
        reals = [str(p) if is_real else os.path.realpath(p) for p in chain]
        dirs.update(reals)
        for i, p in enumerate(chain[:-1]):
            children.setdefault(reals[i + 1], set()).add(p.name)
    return dirs, children


def _match_length(
    pattern: str, env: Mapping[str, str], dirs: set[str], children: dict[str, set[str]], lexical: bool = False
) -> int | None:
    full = expand_user(pattern.strip(), env)
    canonical = os.path.normpath if lexical else os.path.realpath
    if full.endswith("*"):
        parent, stem = os.path.split(full[:-1])
        real_parent = canonical(parent or os.sep)
        if any(name.startswith(stem) for name in children.get(real_parent, ())):
            return len(os.path.join(real_parent, stem))
        return None
    real = canonical(full)
    return len(real) if real in dirs else None


# --- remote rule --------------------------------------------------------------------------------


def _remote_match(ws: Path, git: GitInfo, config: Config) -> _Hit | None:
    """The one space whose `remotes` pattern matches a remote (case-insensitive, `*` spans `/`)."""
    hits: dict[str, _Hit] = {}
    for url in git.remotes:
        remote = normalise_remote(url)
        for space in config.spaces:
            for pattern in space.remotes:
                if space.id not in hits and fnmatchcase(remote.lower(), normalise_remote(pattern).lower()):
                    hits[space.id] = _Hit(space.id, pattern, len(pattern), remote)
    if len(hits) > 1:
        raise AmbiguousSpace(
            f"workspace {ws} matches {_names(hits.values(), 'remote')} by git remote",
            f"make one remote pattern more specific (or remove one) in {_file(config)}, "
            "or add the workspace to one space's paths (paths win over remotes)",
        )
    return next(iter(hits.values()), None)


def _names(hits: Iterable[_Hit], kind: str) -> str:
    parts = [f"space {h.space!r} ({kind} {h.pattern}{f' ~ {h.target}' if h.target else ''})" for h in hits]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]


def _file(config: Config) -> str:
    return str(config.path) if config.path else "the lore config file"
