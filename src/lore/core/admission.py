"""Whether a fact or a note may be written, in one step (docs/design.md, What lore refuses): the
arguments read into a candidate (`fact`, `note`: their shape, refused with InvalidInput as they are
read, before any work), then one verdict (`admit`) on the candidate against what the service fetched
inside the write's transaction: the current items of the space most like it, or the version a
revision replaces. Pure: no database, no clock. The store writes what it is admitted, unchecked.

The verdict, each check in this order (the first that answers wins):
1. an exact **copy** of a current item (the same words; for a fact, the same valid times too):
   nothing is written, the answer names the copy (lore.core.naming, lore.core.similarity);
2. **refused** (the error says why and what to do instead): a likely credential in a field given,
   unless a person allowed it (lore.core.secrets); a revision that changes nothing; a fact whose
   valid_to is not after its valid_from;
3. **named**: written, with the near duplicates, likely conflicts, likely restatements and facts it
   likely replaces named (lore.core.naming);
4. **accepted**: written, nothing to name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Generic, TypeVar, overload

from lore.core import ids, naming, secrets, similarity, validate
from lore.core.errors import InvalidInput, LoreError, Refused
from lore.core.rows import Fact, Note
from lore.core.timeline import parse_time
from lore.core.when import happened

T = TypeVar("T", Fact, Note)

SAME_FACT_HINT = (
    "Give a new statement, subject, valid_from or valid_to (what differs from the current version)."
)
SAME_NOTE_HINT = "Edit the text, title, kind or tags, then save."
_SAME = "Nothing to change: {} already says exactly that."


@dataclass(frozen=True)
class FactCandidate:
    """A fact to write, or a revision's change (None: the current version's value stays)."""

    statement: str | None
    subject: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    allow_secret: bool = False  # a person stores a likely credential deliberately (the CLI's flag)

    @property
    def text(self) -> similarity.Text:
        return similarity.Text.of(self.statement or "", self.subject)

    def onto(self, old: Fact) -> FactCandidate:
        """The next version of `old`: what this change gives, the rest as `old` has it."""
        return replace(
            self,
            statement=self.statement or old.statement,
            subject=self.subject if self.subject is not None else old.subject,
            valid_from=self.valid_from or old.valid_from,
            valid_to=self.valid_to if self.valid_to is not None else old.valid_to,
        )


@dataclass(frozen=True)
class NoteCandidate:
    """A note to write, or the next version of one (a note's edit gives every field)."""

    body: str
    kind: str = "note"
    title: str | None = None
    tags: tuple[str, ...] = ()
    happened_at: datetime | None = None  # when what it says happened (None: now)
    allow_secret: bool = False

    @property
    def words(self) -> str:
        """What the write-time check compares: the title and the body."""
        return _words(self.title, self.body)

    @property
    def text(self) -> similarity.Text:
        return similarity.Text.of(self.words)


def fact(
    statement: object = None,
    subject: object = None,
    valid_from: object = None,
    valid_to: object = None,
    *,
    allow_secret: bool = False,
    revising: int | None = None,
) -> FactCandidate:
    """A fact's arguments, read (InvalidInput: what is wrong with one and what to give): a new fact's,
    or, with `revising` (its lineage), a revision's: any of them, at least one."""
    text = validate.statement(statement) if statement is not None or revising is None else None
    about = validate.optional(subject, "subject", validate.MAX_SUBJECT)
    start, end = parse_time(valid_from, "valid_from"), parse_time(valid_to, "valid_to")
    if revising is not None and (text, about, start, end) == (None, None, None, None):
        raise InvalidInput(f"Nothing to change in {ids.fact(revising)}.", SAME_FACT_HINT)
    return FactCandidate(text, about, start, end, allow_secret)


def note(
    body: object,
    kind: object = "note",
    title: object = None,
    tags: Sequence[object] | None = None,
    when: object = None,
    *,
    allow_secret: bool = False,
) -> NoteCandidate:
    """A note's arguments, read (a new note's or an edit's)."""
    text, k = validate.body(body), validate.kind(kind)
    happened_at = happened(when)
    head = validate.optional(title, "title", validate.MAX_TITLE)
    return NoteCandidate(text, k, head, tuple(validate.tags(tags)), happened_at, allow_secret)


@dataclass(frozen=True)
class Refusal:
    """Not written: the error the writer is given (its message says why; its hint, what to do
    instead)."""

    error: LoreError


@dataclass(frozen=True)
class Copy(Generic[T]):
    """Not written: `item` already says it (the writer is answered with its id)."""

    item: T


@dataclass(frozen=True)
class Named(Generic[T]):
    """Written, with what the check found named (near duplicates, likely conflicts, restatements)."""

    found: naming.Verdict[T]


@dataclass(frozen=True)
class Accepted:
    """Written; nothing to name."""


Verdict = Refusal | Copy[T] | Named[T] | Accepted


@overload
def admit(
    candidate: FactCandidate,
    neighbours: Sequence[Fact] = (),
    *,
    revising: Fact | None = None,
    cosines: Mapping[int, float] | None = None,
) -> Verdict[Fact]: ...
@overload
def admit(
    candidate: NoteCandidate,
    neighbours: Sequence[Note] = (),
    *,
    revising: Note | None = None,
    cosines: None = None,
) -> Verdict[Note]: ...
def admit(
    candidate: FactCandidate | NoteCandidate,
    neighbours: Sequence[Fact] | Sequence[Note] = (),
    *,
    revising: Fact | Note | None = None,
    cosines: Mapping[int, float] | None = None,
) -> Verdict[Fact] | Verdict[Note]:
    """The verdict on `candidate` (see the module docstring). `neighbours`: the current items of its
    space most like it (empty: not compared); `revising`: the version a revision replaces (the
    candidate is then that revision's change); `cosines`: a new fact's cosine with some neighbours
    (by version id), when its vector was made in time."""
    if isinstance(candidate, FactCandidate):
        olds = [x for x in neighbours if isinstance(x, Fact)]
        return _admit_fact(candidate, olds, revising if isinstance(revising, Fact) else None, cosines or {})
    notes = [x for x in neighbours if isinstance(x, Note)]
    return _admit_note(candidate, notes, revising if isinstance(revising, Note) else None)


def _admit_fact(
    new: FactCandidate, neighbours: Sequence[Fact], old: Fact | None, cosines: Mapping[int, float]
) -> Verdict[Fact]:
    found: naming.Verdict[Fact] = naming.classify(
        new.text, neighbours, fact_text, conflicts=True, meaning=lambda f: cosines.get(f.version_id)
    )
    copy = found.same
    if copy is not None:
        if (new.valid_from or copy.valid_from) == copy.valid_from and new.valid_to == copy.valid_to:
            return Copy(copy)
        found = naming.Verdict(None, (copy,))  # the same words, other valid times: named as similar
    given = (("statement", new.statement), ("subject", new.subject))
    refused = _credential(given, "fact", new.allow_secret)
    if refused is not None:
        return refused
    if old is not None:
        new = new.onto(old)
        if _fields(new) == _fields(old):
            return Refusal(InvalidInput(_SAME.format(old.id), SAME_FACT_HINT))
    start, end = new.valid_from, new.valid_to
    if start and end and end <= start:
        return Refusal(
            InvalidInput(
                f"valid_to ({end.isoformat()}) is not after valid_from ({start.isoformat()}).",
                "Give a valid_to later than valid_from, or leave valid_to out (still true).",
            )
        )
    return Named(found) if found.named else Accepted()


def _admit_note(new: NoteCandidate, neighbours: Sequence[Note], old: Note | None) -> Verdict[Note]:
    found: naming.Verdict[Note] = naming.classify(new.text, neighbours, note_text)
    if found.same is not None:
        return Copy(found.same)
    given = (("body", new.body), ("title", new.title), ("tags", list(new.tags)))
    refused = _credential(given, "note", new.allow_secret)
    if refused is not None:
        return refused
    if old is not None and _fields(new) == _fields(old):
        return Refusal(InvalidInput(_SAME.format(old.id), SAME_NOTE_HINT))
    return Named(found) if found.named else Accepted()


def _fields(item: FactCandidate | NoteCandidate | Fact | Note) -> tuple[object, ...]:
    """What a revision must change at least one of: a fact's statement, subject and valid times, a
    note's text, kind, title and tags."""
    if isinstance(item, (FactCandidate, Fact)):
        return (item.statement, item.subject, item.valid_from, item.valid_to)
    return (item.body, item.kind, item.title, list(item.tags))


def _credential(fields: Sequence[secrets.Field], what: str, allow: bool) -> Refusal | None:
    """Refused when a field holds a likely credential (lore.core.secrets: the same words everywhere)."""
    try:
        secrets.refuse(*fields, what=what, allow=allow)
    except Refused as error:
        return Refusal(error)
    return None


def fact_text(fact: Fact) -> similarity.Text:
    return similarity.Text.of(fact.statement, fact.subject)


def note_text(note: Note) -> similarity.Text:
    return similarity.Text.of(_words(note.title, note.body))


def _words(title: str | None, body: str) -> str:
    """What the write-time check compares of a note: its title and its body."""
    return f"{title or ''}\n{body}"
