"""What `lore doctor` (and the web UI's work page) say about a config that parsed: spaces nothing
reaches, configured paths no directory matches, a directory two spaces both claim."""

from __future__ import annotations

import os
from collections.abc import Mapping

from lore.core.config.load import expand_user
from lore.core.config.model import Config


def unreachable_spaces(config: Config) -> list[str]:
    """Spaces no path, remote, default_space or another reachable space's reads_from can reach."""
    sessions = {s.id for s in config.spaces if s.paths or s.remotes} | {config.default_space}
    readable = set(sessions)
    for space in config.spaces:
        if space.id in sessions:
            readable.update(space.reads_from)
    return [s.id for s in config.spaces if s.id not in readable]


def stale_paths(config: Config, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(space id, configured path) for each configured path that no directory on disk matches."""
    stale = []
    for space in config.spaces:
        for pattern in space.paths:
            full = expand_user(pattern, env)
            if full.endswith("*"):
                parent, stem = os.path.split(full[:-1])
                try:
                    with os.scandir(parent or os.sep) as entries:
                        alive = any(e.name.startswith(stem) and e.is_dir() for e in entries)
                except OSError:
                    alive = False
            else:
                alive = os.path.isdir(full)
            if not alive:
                stale.append((space.id, pattern))
    return stale


def claimed_twice(config: Config, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """(path, space, other space) for each directory two spaces both name (expanded, normalised):
    a session there would be an error; `lore doctor` says so from the config alone."""
    seen: dict[str, str] = {}
    out = []
    for space in config.spaces:
        for pattern in space.paths:
            key = os.path.normpath(expand_user(pattern, env))
            other = seen.setdefault(key, space.id)
            if other != space.id:
                out.append((pattern, other, space.id))
    return out
