"""The web UI's pages, one use case each: everything a page shows, read in one transaction (one
pooled connection, one snapshot, read only). Each is made of the same use cases the MCP tools, `/api`
and the CLI call (lore.service.memory, .log, .work, ...), run on that one connection (`within`), so a
page shows what they would say, read at one moment. The forms' use cases are lore.service.forms.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio
import psycopg

from lore.core import ranking
from lore.core.injection import Injection, Usage
from lore.core.ranking import Hit
from lore.core.rows import Counts, Fact, Forgotten, Handoff, Message, Note, Seen, Task
from lore.core.tidy import Report
from lore.service import handoffs, log, memory, overview, retrieval, search, tidy, work
from lore.service.runtime import Runtime

T = TypeVar("T")
# A page reads; it never writes (a GET changes nothing), and what it shows is one moment's.
READ_ONLY = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


def within(rt: Runtime, conn: psycopg.Connection) -> Runtime:
    """`rt`, whose every transaction is `conn`'s current one: the use cases a page or a form is made
    of run as one unit (one connection; an error rolls back all of it)."""
    retrieval.retrieval(rt)  # made once, on the process's runtime (never on the pinned one alone)
    return rt.pinned(conn)


def read(rt: Runtime, load: Callable[[Runtime], T]) -> T:
    """`load` in one read-only transaction, on one connection."""

    def whole(conn: psycopg.Connection) -> T:
        with conn.transaction():
            conn.execute(READ_ONLY)
            return load(within(rt, conn))

    return rt.transact(whole)


def write(rt: Runtime, act: Callable[[Runtime], T]) -> T:
    """`act` in one transaction, on one connection: what it looks up and what it writes together."""

    def whole(conn: psycopg.Connection) -> T:
        with conn.transaction():
            return act(within(rt, conn))

    return rt.transact(whole)


@dataclass(frozen=True)
class Pick:
    """Which space a page of one space shows: `named` (the one its URL names, or the person's only
    one); else the one of `among` written to last (facts, notes, handoffs); else `default`. Every
    such page (Facts, Tasks, Messages, Sessions, Tidy, Log) opens on the same one."""

    named: str | None
    among: tuple[str, ...]
    default: str


def _space(rt: Runtime, pick: Pick) -> str:
    return pick.named or overview.last_used(rt, list(pick.among)) or pick.default


@dataclass(frozen=True)
class OfSpace(Generic[T]):
    """A page of one space: which one it shows, and what."""

    space: str
    shown: T


def _of_space(rt: Runtime, pick: Pick, load: Callable[[Runtime, str], T]) -> OfSpace[T]:
    def both(same: Runtime) -> OfSpace[T]:
        space = _space(same, pick)
        return OfSpace(space, load(same, space))

    return read(rt, both)


def spaces(rt: Runtime, ids: Sequence[str]) -> tuple[dict[str, Counts], list[Seen]]:
    """The Spaces page: what each space holds, and the workspaces that wrote into them."""
    return read(rt, lambda same: overview.spaces(same, ids))


# --- facts ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Facts:
    """The Facts page: the space's current facts with their histories, and what was forgotten."""

    found: memory.SpaceFacts
    forgotten: list[Forgotten]


def facts(rt: Runtime, pick: Pick) -> OfSpace[Facts]:
    def load(same: Runtime, space: str) -> Facts:
        return Facts(memory.space_facts(same, space), overview.forgotten(same, [space], kind="fact"))

    return _of_space(rt, pick, load)


@dataclass(frozen=True)
class FactPage:
    """A fact's page: every version, its forget, how it was used, what was merged into it, and the
    facts a write-time check named (`named`, by lineage: those the person may read)."""

    versions: list[Fact]
    forgotten: list[Forgotten]
    usage: Usage | None
    merged: list[tidy.Merged]
    named: dict[int, Fact]


def fact(rt: Runtime, readable: Sequence[str], fact_id: object, named: Sequence[int] = ()) -> FactPage:
    def load(same: Runtime) -> FactPage:
        versions = memory.fact_history(same, readable, fact_id)
        last = versions[-1]
        return FactPage(
            versions,
            overview.forgotten(same, [last.space], kind="fact", lineage=last.lineage),
            log.usage(same, readable, [last.id]).get(last.id),
            tidy.merged_into(same, readable, last.id),
            memory.current_facts(same, readable, named) if named else {},
        )

    return read(rt, load)


# --- notes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Notes:
    """The Notes page: a search's hits with their notes (by lineage), or the recent notes and how
    many older handoffs they leave out; `explanation` when the search was explained."""

    hits: list[Hit]
    shown: dict[int, Note]
    recent: list[Note]
    older_handoffs: int
    explanation: search.Explanation | None


async def notes(
    rt: Runtime,
    spaces: Sequence[str],
    query: str,
    *,
    kinds: Sequence[str] | None,
    session_space: str,
    explain: bool = False,
    older: bool = True,
) -> Notes:
    """The same search as search_notes (its query embedded first, then the rest in one transaction),
    or, without a query, the recent notes (`older`: with how many older handoffs they leave out)."""
    prepared = None
    if query:
        prepared = await search.prepare(rt, query, session_space=session_space, kinds=kinds, limit=20)

    def load(same: Runtime) -> Notes:
        if prepared is None:
            recent = memory.recent_notes(same, spaces, kinds=kinds)
            left = memory.older_handoffs(same, spaces) if older else 0
            return Notes([], {n.lineage: n for n in recent}, recent, left, None)
        trace = ranking.Trace() if explain else None
        hits = search.found(same, spaces, prepared, trace)
        shown = memory.current_notes(same, spaces, [int(h.id[2:]) for h in hits])
        explained = search.explained(hits, trace) if trace is not None else None
        return Notes(hits, shown, [], 0, explained)

    return await anyio.to_thread.run_sync(read, rt, load)


@dataclass(frozen=True)
class NotePage:
    """A note's page: the note, its links and versions, how it was used."""

    note: Note
    around: search.Neighbourhood
    usage: Usage | None


def note(rt: Runtime, readable: Sequence[str], note_id: object) -> NotePage:
    def load(same: Runtime) -> NotePage:
        found = memory.note(same, readable, note_id)
        around = search.neighbourhood(same, readable, found)
        return NotePage(found, around, log.usage(same, readable, [found.id]).get(found.id))

    return read(rt, load)


# --- the pages of one space -----------------------------------------------------------------------


def tasks(rt: Runtime, pick: Pick, statuses: Sequence[str], limit: int = 300) -> OfSpace[list[Task]]:
    return _of_space(rt, pick, lambda same, space: work.tasks_of(same, space, statuses, limit=limit)[0])


def messages(rt: Runtime, pick: Pick, limit: int = 300) -> OfSpace[list[Message]]:
    return _of_space(rt, pick, lambda same, space: work.recent_messages(same, space, limit=limit))


def sessions(rt: Runtime, pick: Pick, limit: int = 200) -> OfSpace[list[Handoff]]:
    return _of_space(rt, pick, lambda same, space: handoffs.timeline(same, [space], limit=limit))


def injections(rt: Runtime, pick: Pick, limit: int = 200) -> OfSpace[list[Injection]]:
    return _of_space(rt, pick, lambda same, space: log.recent(same, [space], limit=limit))


def tidying(rt: Runtime, pick: Pick, *, check_paths: bool) -> OfSpace[Report]:
    return _of_space(rt, pick, lambda same, space: tidy.report(same, space, check_paths=check_paths))


@dataclass(frozen=True)
class InjectionPage:
    """One injection record, and the id of the handoff it showed (`n_N`, as its text says)."""

    row: Injection
    handoff: str | None


def injection(rt: Runtime, readable: Sequence[str], record_id: object) -> InjectionPage:
    def load(same: Runtime) -> InjectionPage:
        row = log.get(same, readable, record_id)
        named = handoffs.public_ids(same, readable, [row.handoff])
        return InjectionPage(row, named.get(row.handoff) if row.handoff else None)

    return read(rt, load)
