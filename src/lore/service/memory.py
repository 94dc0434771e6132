"""Facts and notes, one function per thing a caller does: remember, recall, look at the history,
revise, forget. The MCP tools, `/api`, the web UI and the `lore facts|notes` commands all call these,
with the raw values they were given: each limit and rule is checked here (lore.core.validate,
lore.core.timeline), once, and the store (lore.store.facts, lore.store.notes) owns the rest (secret
refusal, the revise no-op, the forget audit row)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

import psycopg

from lore.core import advice, naming, render, similarity, validate
from lore.core.errors import InvalidInput, NotFound
from lore.core.rows import Fact, Note
from lore.core.session import SessionContext, Who
from lore.core.timeline import When, parse_time
from lore.core.when import happened
from lore.service import checks, retrieval
from lore.service.runtime import Runtime
from lore.store import facts, notes, tidy

# The most facts one recall returns (MCP, the CLI, /api and the web UI alike); the count says how
# many more there are.
RECALL_LIMIT = render.RECALL_MAX_FACTS
HANDOFFS_LISTED = notes.HANDOFFS_LISTED  # handoffs a notes list shows per repository


R = TypeVar("R", Fact, Note)


@dataclass(frozen=True)
class Remembered(Generic[R]):
    """A write's outcome: the item written, or the current copy that made writing unnecessary
    (`duplicate`: nothing written), with the near duplicates and likely conflicts the write-time
    check found (docs/design.md, Duplicates and conflicts), and the facts it was said to replace.
    `likely`: named as likely the same (not folded); `replaces`: facts this change statement likely
    replaces (named until an agent confirms with `supersedes`)."""

    item: R
    duplicate: bool = False
    similar: tuple[R, ...] = ()
    conflicts: tuple[Fact, ...] = ()
    superseded: tuple[Fact, ...] = ()
    likely: tuple[R, ...] = ()
    replaces: tuple[Fact, ...] = ()

    @property
    def id(self) -> str:
        return self.item.id

    @property
    def space(self) -> str:
        return self.item.space

    def text(self, caller: advice.Caller = advice.TOOL) -> str:
        """What the writer is told, in its own terms (tool calls for an agent and /api, `lore`
        commands at a terminal, buttons in the web UI): one wording, lore.core.advice."""
        return advice.remembered(
            self.item,
            duplicate=self.duplicate,
            similar=self.similar,
            conflicts=self.conflicts,
            superseded=self.superseded,
            likely=self.likely,
            replaces=self.replaces,
            caller=caller,
        )

    def structured(self) -> dict[str, object]:
        """The id and space, and what the check found (only what it found: a plain write is
        `{"id", "space"}`)."""
        out: dict[str, object] = {"id": self.id, "space": self.space}
        if self.duplicate:
            out["duplicate"] = True
        for key, items in (
            ("similar", self.similar),
            ("conflicts", self.conflicts),
            ("superseded", self.superseded),
            ("likely", self.likely[: naming.NAMED_MAX]),
            ("replaces", self.replaces[: naming.NAMED_MAX]),
        ):
            if items:
                out[key] = [x.id for x in items]
        return out


# The write-time check compares a new item with at most this many current items of its space: those
# sharing the most words with it (lore.store.facts.alike / notes.alike; facts also by meaning:
# lore.service.checks).
ALIKE = checks.ALIKE
# Writes are checked only while this is true: bench/month_six.py turns it off for its "no check" row.
CHECK_WRITES = True


fact_text = checks.fact_text


def note_text(note: Note) -> similarity.Text:
    return similarity.Text.of(f"{note.title or ''}\n{note.body}")


def _one_at_a_time(conn: psycopg.Connection, space: str, kind: str, key: str) -> None:
    """Two sessions writing the same words into a space at once: the second waits for the first to
    commit, then finds its copy (a transaction-scoped advisory lock on the words' hash)."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 28))", (f"{space}\x1f{kind}\x1f{key}",))


def remember_fact(
    rt: Runtime,
    who: Who,
    statement: object,
    *,
    subject: object = None,
    valid_from: object = None,
    valid_to: object = None,
    supersedes: object = None,
    allow_secret: bool = False,
) -> Remembered[Fact]:
    """A new fact, checked against the current facts of the space first (one rule for every entry
    point): a copy writes nothing and answers with the existing id; a near duplicate or a likely
    conflict is written and named. `supersedes`: facts (an id, ids separated by commas, or a list)
    this one replaces: left out of session starts from now on, kept in history and search."""
    text = validate.statement(statement)
    about, start, end = _fact_fields(subject, valid_from, valid_to)
    replaced = _fact_ids(supersedes, "supersedes")
    new = similarity.Text.of(text, about)
    pending = checks.begin(rt, text) if CHECK_WRITES else None

    def write(conn: psycopg.Connection) -> Remembered[Fact]:
        with conn.transaction():
            found: naming.Verdict[Fact] = naming.Verdict()
            vector = None
            if CHECK_WRITES:
                _one_at_a_time(conn, who.origin.space, "fact", new.key)
                found, vector = checks.check_fact(conn, rt, who.origin.space, new, text, pending)
            copy = found.same
            if copy is not None and (start or copy.valid_from) == copy.valid_from and end == copy.valid_to:
                item, duplicate = copy, True
            else:
                item, duplicate = (
                    facts.remember(
                        conn,
                        who.origin,
                        text,
                        subject=about,
                        valid_from=start,
                        valid_to=end,
                        allow_secret=allow_secret,
                        vector=vector,
                    ),
                    False,
                )
                if copy is not None:  # the same words, other valid times: a new fact, named as similar
                    found = naming.Verdict(None, (copy, *found.similar), found.conflicts, found.likely)
            gone = _supersede(conn, who, item, replaced) if replaced else ()
            confirmed = {x.id for x in gone}
            return Remembered(
                item,
                duplicate,
                found.similar,
                tuple(x for x in found.conflicts if x.id not in confirmed),
                gone,
                found.likely,
                tuple(x for x in found.replaces if x.id not in confirmed),
            )

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


def remember_note(
    rt: Runtime,
    who: Who,
    body: object,
    *,
    kind: object = "note",
    title: object = None,
    tags: Sequence[object] | None = None,
    allow_secret: bool = False,
    when: object = None,
) -> Remembered[Note]:
    """Stored at once; embedded in the background (never waited for). Checked first against the
    current notes of the space, as facts are (no conflicts: notes have no subject). `when`: when
    what it says happened (ISO 8601; default: now)."""
    text, k = validate.body(body), validate.kind(kind)
    happened_at = happened(when)
    head = validate.optional(title, "title", validate.MAX_TITLE)
    labels = validate.tags(tags)
    new = similarity.Text.of(f"{head or ''}\n{text}")

    def write(conn: psycopg.Connection) -> Remembered[Note]:
        with conn.transaction():
            found: naming.Verdict[Note] = naming.Verdict()
            if CHECK_WRITES:
                _one_at_a_time(conn, who.origin.space, "note", new.key)
                olds = notes.alike(conn, who.origin.space, f"{head or ''}\n{text}", limit=ALIKE)
                found = naming.classify(new, olds, note_text)
            if found.same is not None:
                return Remembered(found.same, True)
            note = notes.remember(
                conn,
                who.origin,
                text,
                kind=k,
                title=head,
                tags=labels,
                allow_secret=allow_secret,
                happened_at=happened_at,
            )
            return Remembered(note, False, found.similar)

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


def recall(
    rt: Runtime,
    session: SessionContext,
    *,
    subject: object = None,
    as_of: object = None,
    valid_at: object = None,
) -> Recalled:
    """The session's facts (its space and what it reads), those about its workspace first."""
    about = validate.optional(subject, "subject", validate.MAX_SUBJECT)
    when = When(parse_time(as_of, "as_of"), parse_time(valid_at, "valid_at"))
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
    rt: Runtime,
    who: Who,
    fact_id: object,
    *,
    statement: object = None,
    subject: object = None,
    valid_from: object = None,
    valid_to: object = None,
    allow_secret: bool = False,
) -> tuple[Fact, Fact]:
    """A new version of the fact; what is not given stays. Returns (old, new)."""
    _, lineage = validate.item_id(fact_id, expect="f")
    text = validate.statement(statement) if statement is not None else None
    about, start, end = _fact_fields(subject, valid_from, valid_to)
    return rt.transact(
        lambda c: facts.revise(
            c,
            who.origin,
            who.readable,
            lineage,
            statement=text,
            subject=about,
            valid_from=start,
            valid_to=end,
            allow_secret=allow_secret,
        )
    )


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


def revise_note(
    rt: Runtime,
    who: Who,
    note_id: object,
    *,
    body: object,
    kind: object,
    title: object = None,
    tags: Sequence[object] | None = None,
) -> tuple[Note, Note]:
    """A new version of the note (embedded later, like a new note). Returns (old, new)."""
    _, lineage = validate.item_id(note_id, expect="n")
    text, k = validate.body(body), validate.kind(kind)
    head = validate.optional(title, "title", validate.MAX_TITLE)
    labels = validate.tags(tags)
    changed = rt.transact(
        lambda c: notes.revise(
            c, who.origin, who.readable, lineage, body=text, kind=k, title=head, tags=labels
        )
    )
    retrieval.poke(rt)
    return changed


def _fact_fields(
    subject: object, valid_from: object, valid_to: object
) -> tuple[str | None, datetime | None, datetime | None]:
    """A fact's subject and valid times, checked (None where not given)."""
    about = validate.optional(subject, "subject", validate.MAX_SUBJECT)
    return about, parse_time(valid_from, "valid_from"), parse_time(valid_to, "valid_to")


def _header(subject: str | None, when: When) -> str | None:
    parts = []
    if subject:
        parts.append(f"about {subject}")
    if when.as_of:
        parts.append(f"as believed at {when.as_of.isoformat()}")
    if when.valid_at:
        parts.append(f"true at {when.valid_at.isoformat()}")
    return ", ".join(parts) or None
