"""Facts and notes, one function per thing a caller does: remember, recall, look at the history,
revise, forget. The MCP tools, `/api`, the web UI and the `lore facts|notes` commands all call these,
with the raw values they were given. Whether a write may happen is lore.core.admission's to say:
the values read into a candidate (their shape), then one verdict inside the write's transaction
(copies, credentials, the revise no-op, the valid-time interval, what to name); the store
(lore.store.facts, lore.store.notes) only writes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Generic, NotRequired, TypedDict, TypeVar, Unpack

import psycopg

from lore.core import admission, advice, naming, render, validate
from lore.core.errors import InvalidInput, NotFound
from lore.core.rows import Fact, Note
from lore.core.session import SessionContext, Who
from lore.core.timeline import When, parse_time
from lore.service import checks, retrieval
from lore.service.runtime import Runtime
from lore.store import facts, notes, tidy

# The most facts one recall returns (MCP, the CLI, /api and the web UI alike); the count says how
# many more there are.
RECALL_LIMIT = render.RECALL_MAX_FACTS
HANDOFFS_LISTED = notes.HANDOFFS_LISTED  # handoffs a notes list shows per repository


R = TypeVar("R", Fact, Note)


class FactFields(TypedDict, total=False):
    """A fact's fields as every entry point gives them, raw (read by lore.core.admission.fact)."""

    subject: object
    valid_from: object
    valid_to: object
    allow_secret: bool  # a person stores a likely credential deliberately (the CLI's flag)


class NoteEdit(TypedDict):
    """A note's fields as an edit gives them, raw (read by lore.core.admission.note): all of them."""

    body: object
    kind: object
    title: NotRequired[object]
    tags: NotRequired[Sequence[object] | None]


class NoteFields(TypedDict, total=False):
    """A new note's fields besides its text, raw: `when` what it says happened (ISO 8601; default:
    now); `allow_secret`, as for facts."""

    kind: object
    title: object
    tags: Sequence[object] | None
    allow_secret: bool
    when: object


class Named(TypedDict):
    """What a write-time check named, best first in each (lore.core.advice.remembered's words)."""

    similar: Sequence[Fact | Note]
    conflicts: Sequence[Fact]
    likely: Sequence[Fact | Note]
    replaces: Sequence[Fact]


@dataclass(frozen=True)
class Remembered(Generic[R]):
    """A write's outcome: the item written, or the current copy that made writing unnecessary
    (`duplicate`: nothing written), with what the write-time check named (`found`: near duplicates,
    likely conflicts, likely restatements, facts a change statement likely replaces; docs/design.md,
    Duplicates and conflicts), and the facts it was said to replace (`superseded`)."""

    item: R
    duplicate: bool = False
    found: naming.Verdict[R] = field(default_factory=naming.Verdict)
    superseded: tuple[Fact, ...] = ()

    @property
    def id(self) -> str:
        return self.item.id

    @property
    def space(self) -> str:
        return self.item.space

    def named(self) -> Named:
        """What the check named, by kind (notes have no conflicts and replace nothing)."""
        found = self.found
        return Named(
            similar=found.similar,
            conflicts=tuple(x for x in found.conflicts if isinstance(x, Fact)),
            likely=found.likely,
            replaces=tuple(x for x in found.replaces if isinstance(x, Fact)),
        )

    def text(self, caller: advice.Caller = advice.TOOL) -> str:
        """What the writer is told, in its own terms (tool calls for an agent and /api, `lore`
        commands at a terminal, buttons in the web UI): one wording, lore.core.advice."""
        return advice.remembered(
            self.item, duplicate=self.duplicate, superseded=self.superseded, caller=caller, **self.named()
        )

    def structured(self) -> dict[str, object]:
        """The id and space, and what the check found (only what it found: a plain write is
        `{"id", "space"}`)."""
        out: dict[str, object] = {"id": self.id, "space": self.space}
        if self.duplicate:
            out["duplicate"] = True
        named = self.named()
        for key, items in (
            ("similar", named["similar"]),
            ("conflicts", named["conflicts"]),
            ("superseded", self.superseded),
            ("likely", named["likely"][: naming.NAMED_MAX]),
            ("replaces", named["replaces"][: naming.NAMED_MAX]),
        ):
            if items:
                out[key] = [x.id for x in items]
        return out


# The write-time check compares a new item with at most this many current items of its space: those
# sharing the most words with it (lore.store.facts.alike / notes.alike; facts also by meaning:
# lore.service.checks). The verdict is lore.core.admission's.
ALIKE = checks.ALIKE
# Writes are checked only while this is true: bench/month_six.py turns it off for its "no check" row.
CHECK_WRITES = True


def _one_at_a_time(conn: psycopg.Connection, space: str, kind: str, key: str) -> None:
    """Two sessions writing the same words into a space at once: the second waits for the first to
    commit, then finds its copy (a transaction-scoped advisory lock on the words' hash)."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 28))", (f"{space}\x1f{kind}\x1f{key}",))


def _admitted(verdict: admission.Verdict[R]) -> naming.Verdict[R]:
    """What a verdict that lets the write go on named (a refusal raised: why, and what to do)."""
    if isinstance(verdict, admission.Refusal):
        raise verdict.error
    return verdict.found if isinstance(verdict, admission.Named) else naming.Verdict()


def remember_fact(
    rt: Runtime, who: Who, statement: object, *, supersedes: object = None, **fields: Unpack[FactFields]
) -> Remembered[Fact]:
    """A new fact, admitted first (lore.core.admission, one rule for every entry point) against the
    current facts of the space: a copy writes nothing and answers with the existing id; a near
    duplicate or a likely conflict is written and named. `supersedes`: facts (an id, ids separated by
    commas, or a list) this one replaces: left out of session starts from now on, kept in history and
    search."""
    new = admission.fact(statement, **fields)
    assert new.statement is not None
    replaced = _fact_ids(supersedes, "supersedes")
    pending = checks.begin(rt, new.statement) if CHECK_WRITES else None

    def write(conn: psycopg.Connection) -> Remembered[Fact]:
        with conn.transaction():
            near = checks.Neighbours()
            if CHECK_WRITES:
                _one_at_a_time(conn, who.origin.space, "fact", new.text.key)
                near = checks.neighbours(conn, rt, who.origin.space, new.statement or "", pending)
            verdict = admission.admit(new, near.olds, cosines=near.cosines)
            if isinstance(verdict, admission.Copy):
                item, duplicate, found = verdict.item, True, naming.Verdict[Fact]()
            else:
                found, duplicate = _admitted(verdict), False
                item = facts.write(conn, who.origin, new, vector=near.vector)
            gone = _supersede(conn, who, item, replaced) if replaced else ()
            confirmed = {x.id for x in gone}
            found = replace(
                found,
                conflicts=tuple(x for x in found.conflicts if x.id not in confirmed),
                replaces=tuple(x for x in found.replaces if x.id not in confirmed),
            )
            return Remembered(item, duplicate, found, gone)

    return rt.transact(write)


def _fact_ids(value: object, name: str) -> list[int]:
    """Fact ids given as one id, ids separated by commas or spaces, or a list of ids (None: none)."""
    if value is None or value == "":
        return []
    given = value.replace(",", " ").split() if isinstance(value, str) else value
    if not isinstance(given, (list, tuple)) or len(given) > 20:
        raise InvalidInput(
            f"{name} must be a fact id (f_12), several separated by commas, or a list of at most 20.",
            'Example: supersedes="f_4".',
        )
    return list(dict.fromkeys(validate.item_id(x, expect="f")[1] for x in given))


def _supersede(conn: psycopg.Connection, who: Who, newer: Fact, lineages: Sequence[int]) -> tuple[Fact, ...]:
    """Record that `newer` replaces the facts `lineages` (current, of the session's own space)."""
    if newer.lineage in lineages:
        raise InvalidInput(f"{newer.id} cannot replace itself.", "Name the older fact it replaces.")
    olds = facts.current(conn, [who.origin.space], lineages)
    missing = [f"f_{x}" for x in lineages if x not in olds]
    if missing:
        raise NotFound(
            f"No current fact {', '.join(missing)} in space {who.origin.space} to replace.",
            "Name facts of this workspace's space as recall_facts lists them.",
        )
    standing = tidy.superseded(conn, [who.origin.space])
    fresh = [olds[x].id for x in lineages if standing.get(olds[x].id) != newer.id]
    if fresh:
        tidy.record(conn, who.origin, "supersede", fresh, target=newer.id)
    return tuple(olds[x] for x in lineages)


def remember_note(rt: Runtime, who: Who, body: object, **fields: Unpack[NoteFields]) -> Remembered[Note]:
    """Stored at once; embedded in the background (never waited for). Admitted first against the
    current notes of the space, as facts are (no conflicts: notes have no subject). `when`: when
    what it says happened (ISO 8601; default: now)."""
    new = admission.note(body, **fields)

    def write(conn: psycopg.Connection) -> Remembered[Note]:
        with conn.transaction():
            olds: list[Note] = []
            if CHECK_WRITES:
                _one_at_a_time(conn, who.origin.space, "note", new.text.key)
                olds = notes.alike(conn, who.origin.space, new.words, limit=ALIKE)
            verdict = admission.admit(new, olds)
            if isinstance(verdict, admission.Copy):
                return Remembered(verdict.item, True)
            found = _admitted(verdict)
            note = notes.write(conn, who.origin, new)
            return Remembered(note, False, naming.Verdict(similar=found.similar))

    done = rt.transact(write)
    if not done.duplicate:
        retrieval.poke(rt)
    return done


@dataclass(frozen=True)
class Recalled:
    """Facts in render order (at most RECALL_LIMIT) and how many there are in all."""

    facts: list[Fact]
    total: int
    space: str
    workspace_name: str | None
    header: str | None  # what was asked for ("about acme-api, as believed at …"), or None

    def text(self, max_chars: int) -> str:
        """The text an agent reads (the cut line first, inside the budget)."""
        return self.rendered(max_chars).text

    def rendered(self, max_chars: int) -> render.Rendered:
        return render.recall(
            self.facts,
            space=self.space,
            max_chars=max_chars,
            total=self.total,
            header=self.header,
        )


class Asked(TypedDict, total=False):
    """What a recall asks for, raw: the facts about `subject`, as believed at `as_of`, true at
    `valid_at` (ISO 8601 times)."""

    subject: object
    as_of: object
    valid_at: object


def recall(rt: Runtime, session: SessionContext, **asked: Unpack[Asked]) -> Recalled:
    """The session's facts (its space and what it reads), those about its workspace first."""
    about = validate.optional(asked.get("subject"), "subject", validate.MAX_SUBJECT)
    when = When(parse_time(asked.get("as_of"), "as_of"), parse_time(asked.get("valid_at"), "valid_at"))
    rows, total = rt.transact(
        lambda c: facts.page(
            c,
            session.readable,
            when,
            subject=about,
            prefer_subject=session.workspace_name,
            limit=RECALL_LIMIT,
        )
    )
    return Recalled(rows, total, session.space, session.workspace_name, _header(about, when))


@dataclass(frozen=True)
class SpaceFacts:
    """One space's current facts (the web UI's Facts page), each with every version."""

    facts: list[Fact]
    total: int
    history: dict[int, list[Fact]]


def space_facts(rt: Runtime, space: str) -> SpaceFacts:
    def load(conn: psycopg.Connection) -> SpaceFacts:
        rows, total = facts.page(conn, [space], limit=RECALL_LIMIT)
        versions = facts.histories(conn, [space], [f.lineage for f in rows])
        return SpaceFacts(rows, total, versions)

    return rt.transact(load)


def fact_history(rt: Runtime, readable: Sequence[str], fact_id: object) -> list[Fact]:
    """Every version of one fact, oldest first; NotFound when no readable space has it."""
    _, lineage = validate.item_id(fact_id, expect="f")
    versions = rt.transact(lambda c: facts.history(c, readable, lineage))
    if not versions:
        raise NotFound(
            f"No fact f_{lineage} in this workspace's spaces.", "Check the id (recall_facts lists them)."
        )
    return versions


def revise_fact(
    rt: Runtime, who: Who, fact_id: object, *, statement: object = None, **fields: Unpack[FactFields]
) -> tuple[Fact, Fact]:
    """A new version of the fact; what is not given stays. Returns (old, new)."""
    _, lineage = validate.item_id(fact_id, expect="f")
    change = admission.fact(statement, revising=lineage, **fields)
    return rt.transact(lambda c: revise_in(c, who, lineage, change))


def revise_in(
    conn: psycopg.Connection,
    who: Who,
    lineage: int,
    change: admission.FactCandidate,
    *,
    stated_at: datetime | None = None,
) -> tuple[Fact, Fact]:
    """Revise fact `lineage` inside the caller's transaction, admitted first (the same refusals for
    every revision: `lore tidy`'s merges and undos too). `stated_at`: the new version brings back a
    statement made then. Returns (old, new)."""
    with conn.transaction():
        old = facts.lock(conn, who.origin, who.readable, lineage)
        _admitted(admission.admit(change, revising=old))
        return old, facts.write_next(conn, who.origin, old, change.onto(old), stated_at=stated_at)


def forget(rt: Runtime, who: Who, item_id: object, reason: object) -> Fact | Note:
    """Forget a fact or a note (its belief closed, an audit row written; the rows stay)."""
    prefix, lineage = validate.item_id(item_id)
    why = validate.text(reason, "reason", max_chars=validate.MAX_REASON)
    assert why is not None
    if prefix == "f":
        return rt.transact(lambda c: facts.forget(c, who.origin, who.readable, lineage, why))
    return rt.transact(lambda c: notes.forget(c, who.origin, who.readable, lineage, why))


def current_facts(rt: Runtime, readable: Sequence[str], lineages: Sequence[int]) -> dict[int, Fact]:
    """The current versions of several facts (those `readable` can see), by lineage."""
    return rt.transact(lambda c: facts.current(c, readable, lineages))


def note(rt: Runtime, readable: Sequence[str], note_id: object) -> Note:
    _, lineage = validate.item_id(note_id, expect="n")
    return rt.transact(lambda c: notes.get(c, readable, lineage))


def current_notes(rt: Runtime, readable: Sequence[str], lineages: Sequence[int]) -> dict[int, Note]:
    """The current versions of several notes (those `readable` can see), by lineage."""
    return rt.transact(lambda c: notes.current(c, readable, lineages))


def recent_notes(
    rt: Runtime, readable: Sequence[str], *, kinds: Sequence[str] | None = None, limit: int = 100
) -> list[Note]:
    """Current notes, newest first (the web UI's list before any search): of the handoffs, only the
    latest few of each repository (lore.store.notes.HANDOFFS_LISTED), unless handoffs are asked for."""
    return rt.transact(lambda c: notes.recent(c, readable, kinds=kinds, limit=limit))


def older_handoffs(rt: Runtime, readable: Sequence[str]) -> int:
    """How many handoffs a notes list leaves out (search and the Sessions page still have them)."""
    return rt.transact(lambda c: notes.older_handoffs(c, readable))


def revise_note(rt: Runtime, who: Who, note_id: object, **edit: Unpack[NoteEdit]) -> tuple[Note, Note]:
    """A new version of the note (embedded later, like a new note), admitted first. Returns (old, new)."""
    _, lineage = validate.item_id(note_id, expect="n")
    new = admission.note(**edit)
    changed = rt.transact(lambda c: revise_note_in(c, who, lineage, new))
    retrieval.poke(rt)
    return changed


def revise_note_in(
    conn: psycopg.Connection, who: Who, lineage: int, new: admission.NoteCandidate
) -> tuple[Note, Note]:
    """Edit note `lineage` inside the caller's transaction, admitted first. Returns (old, new)."""
    with conn.transaction():
        old = notes.lock(conn, who.origin, who.readable, lineage)
        _admitted(admission.admit(new, revising=old))
        return old, notes.write_next(conn, who.origin, old, new)


def _header(subject: str | None, when: When) -> str | None:
    parts = []
    if subject:
        parts.append(f"about {subject}")
    if when.as_of:
        parts.append(f"as believed at {when.as_of.isoformat()}")
    if when.valid_at:
        parts.append(f"true at {when.valid_at.isoformat()}")
    return ", ".join(parts) or None
