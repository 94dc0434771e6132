"""What a valid config is: the frozen dataclasses a parsed config file becomes, their defaults and
limits, and the starter file `lore init` writes. Nothing here reads a file or the disk."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_MAX_CHARS = 8000
MIN_MAX_CHARS, MAX_MAX_CHARS = 500, 9500
DEFAULT_HANDOFF_HOURS = 168  # a handoff older than a week no longer leads the session start
MAX_HANDOFF_HOURS = 8760
DEFAULT_RETENTION_DAYS = 90  # the record of what lore told each agent is kept this long
MAX_RETENTION_DAYS = 3650

STARTER_CONFIG = """\
# lore configuration: which space (memory partition) each workspace belongs to.
# `lore which [DIR]` explains the choice for a directory; `lore doctor` checks this file.
# Resolution order: $LORE_SPACE, then the longest matching path, then a git remote
# pattern, then default_space. Two spaces matching equally well is an error, never a guess.

# Sessions that match no path or remote use this space. Delete it to make that an error.
default_space = "personal"

[[space]]
id    = "personal"
paths = []                          # e.g. ["~/dotfiles", "~/notes"]

# [[space]]
# id           = "work"
# paths        = ["~/codes/acme-*"]     # a trailing * matches by plain string prefix
# remotes      = ["github.com/acme/*"]  # git remote patterns: survive moves and renames
# reads_from   = ["personal"]           # work sessions also read personal (one-way)
# accepts_from = ["personal"]           # who may file tasks/messages into work's inbox

# [database]
# url = "postgresql://user@host/lore"   # default: the embedded PostgreSQL ($LORE_DATABASE_URL wins)
# listen_url = "postgresql://..."       # behind a transaction pooler: a direct URL for LISTEN
# pooler = "auto"                       # auto, none, session or transaction ($LORE_DATABASE_POOLER wins)

# [session_start]
# max_chars = 8000                      # 500..9500: budget of the text injected at session start
# handoff_max_age_hours = 168           # 0..8760: show the last session's handoff this long (0: never)

# [log]
# retention_days = 90                   # 1..3650: keep the record of what agents were told this long
"""


@dataclass(frozen=True)
class SpaceConfig:
    id: str
    paths: tuple[str, ...] = ()
    remotes: tuple[str, ...] = ()
    reads_from: tuple[str, ...] = ()
    accepts_from: tuple[str, ...] = ()


@dataclass(frozen=True)
class EmbedderSettings:
    """`[embedder]`: which provider (lore.embeddings) and, for `openai`, where and which model."""

    name: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    dimensions: int | None = None
    min_similarity: float | None = None
    second: str | None = (
        None  # a second model fused beside the first: "e5", "none" (default: e5 if installed)
    )


@dataclass(frozen=True)
class Config:
    path: Path | None
    default_space: str | None
    spaces: tuple[SpaceConfig, ...]
    database_url: str | None = None
    session_start_max_chars: int = DEFAULT_MAX_CHARS
    embedder: EmbedderSettings = EmbedderSettings()
    handoff_max_age_hours: int = DEFAULT_HANDOFF_HOURS
    retention_days: int = DEFAULT_RETENTION_DAYS  # `lore log`: the injection record's age limit
    # `[database] listen_url` and `pooler` (lore.core.pooling): LISTEN beside a transaction pooler
    database_listen_url: str | None = None
    database_pooler: str | None = None
    # Sign-in mode: teammates' spaces linked to this user's (both configs name each other), each with
    # the spaces of this user it accepts from. Never resolved to, never listed: only a `to` of
    # file_task / send_message can name one (lore.core.links).
    peers: tuple[SpaceConfig, ...] = ()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(s.id for s in self.spaces)

    def space(self, id: str) -> SpaceConfig | None:
        return next((s for s in self.spaces if s.id == id), None)

    def target(self, id: str) -> SpaceConfig | None:
        """A space a task or a message may be addressed to: one of this config's, or a linked peer's."""
        return self.space(id) or next((s for s in self.peers if s.id == id), None)

    def readable_spaces(self, id: str) -> tuple[str, ...]:
        """The space itself first, then its `reads_from` (one-way, not transitive)."""
        space = self.space(id)
        return tuple(dict.fromkeys((id, *(space.reads_from if space else ()))))


def foreign(ref: str) -> bool:
    """Whether a `reads_from` / `accepts_from` entry names another user's space (`bob/work`)."""
    return "/" in ref


def local_only(config: Config) -> Config:
    """`config` without the entries naming other users' spaces."""

    def mine(values: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(v for v in values if not foreign(v))

    spaces = tuple(
        replace(s, reads_from=mine(s.reads_from), accepts_from=mine(s.accepts_from)) for s in config.spaces
    )
    return replace(config, spaces=spaces)
