"""The rows lore reads and writes, as frozen dataclasses: one definition for the psycopg modules
(which fill them with `class_row`), the hooks (which fill them from psql's JSON) and the pure
renderers (which only read them). Pure: no database driver, so the hooks can import it.

A fact or note is a `Version` of a lineage (lore.versions): its public id names the lineage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from lore.core import ids

T = TypeVar("T")


@dataclass(frozen=True)
class Version:
    """What every version of a fact or note has: which lineage, where, when believed, by whom."""

    lineage: int
    version_id: int
    space: str
    recorded_at: datetime
    superseded_at: datetime | None
    source: str
    workspace: str | None


@dataclass(frozen=True)
class Fact(Version):
    statement: str
    subject: str | None
    valid_from: datetime
    valid_to: datetime | None
    # When this statement was made, if not when this version was recorded: a version that brings
    # back an earlier statement (a tidy undo or redo) keeps that statement's time (migration 0020).
    stated_at: datetime | None = None

    @property
    def id(self) -> str:
        return ids.fact(self.lineage)

    @property
    def stated(self) -> datetime:
        """The fact's own time: what "newer" and "older" compare (docs/design.md, Facts)."""
        return self.stated_at or self.recorded_at


@dataclass(frozen=True)
class Note(Version):
    kind: str
    title: str | None
    body: str
    tags: list[str]
    happened_at: datetime | None = None  # when it happened (lore.core.when); read with the row

    @property
    def id(self) -> str:
        return ids.note(self.lineage)


@dataclass(frozen=True)
class Task:
    """A task: a note of kind `task` and its state (status, who filed it)."""

    lineage: int
    space: str
    status: str
    title: str | None
    body: str
    from_space: str
    from_source: str
    from_workspace: str | None
    filed_at: datetime
    updated_at: datetime

    @property
    def id(self) -> str:
        return ids.note(self.lineage)


@dataclass(frozen=True)
class Message:
    num: int
    to_space: str
    from_space: str
    body: str
    reply_to: int | None
    thread: int
    source: str
    workspace: str | None
    from_session: str | None
    sent_at: datetime
    read_at: datetime | None
    read_by: str | None

    @property
    def id(self) -> str:
        return ids.message(self.num)

    @property
    def reply_id(self) -> str | None:
        return ids.message(self.reply_to) if self.reply_to is not None else None


@dataclass(frozen=True)
class Handoff:
    """What one agent session left behind (migration 0007): one row per (space, client, session),
    updated by each end-of-turn or end-of-session event. Its note (`n_<note>`) makes it searchable."""

    id: int
    space: str
    client: str
    session_id: str
    root: str  # the workspace's git top-level (or directory): what "here" means
    workspace: str  # the directory the agent ran in
    workspace_name: str
    event: str  # the client's event that wrote it last
    message: str | None  # the agent's final message, bounded and redacted
    message_chars: int  # its length before it was cut
    changes: list[str] | None  # `git status --porcelain` lines (the first 50); None: no git there
    changed: int  # how many paths had changed
    diffstat: str | None  # `git diff --stat HEAD`, bounded
    tasks: list[int]  # lineages of the tasks it touched
    note: int | None
    events: int
    started_at: datetime
    updated_at: datetime

    @property
    def note_id(self) -> str | None:
        return ids.note(self.note) if self.note is not None else None


def from_json(kind: type[T], data: Mapping[str, Any]) -> T:
    """A row from one JSON object of PostgreSQL's (`json_agg` of the same columns): timestamps
    arrive as ISO strings and are read back as datetimes; every field without a default must be
    present."""
    values = {}
    for f in dataclasses.fields(kind):  # type: ignore[arg-type]
        if f.name not in data and f.default is not dataclasses.MISSING:
            continue
        value = data[f.name]
        if value is not None and "datetime" in str(f.type):
            value = datetime.fromisoformat(value)
        values[f.name] = value
    return kind(**values)


@dataclass(frozen=True)
class InstructionSection:
    """One section of an agent's instruction file imported as a note (`lore import-instructions`,
    migrations 0010 and 0013): where it is, and the start of its text (lore_instructions_at)."""

    lineage: int
    root: str  # the repository it was imported from (the session's, at session start)
    file: str  # relative to `root`
    section: str  # the heading path
    title: str | None
    body: str  # its first 400 characters
    first_line: int | None
    total: int  # how many such sections the space holds for this client (before the limit)

    @property
    def note_id(self) -> str:
        return ids.note(self.lineage)


# --- overviews (lore.store.overview) ----------------------------------------------------------


@dataclass(frozen=True)
class Counts:
    facts: int = 0
    notes: int = 0
    open_tasks: int = 0
    inbox: int = 0
    unread: int = 0


@dataclass(frozen=True)
class Seen:
    """A workspace that wrote into a space, and when it last did."""

    space: str
    workspace: str
    last: datetime


@dataclass(frozen=True)
class Forgotten:
    item_kind: str  # fact | note
    lineage: int
    space: str
    reason: str
    source: str
    workspace: str | None
    at: datetime
    text: str  # the last believed statement, or the note's title / start of its body

    @property
    def id(self) -> str:
        return ids.fact(self.lineage) if self.item_kind == "fact" else ids.note(self.lineage)
