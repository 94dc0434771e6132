"""When two memories say the same thing, or contradict each other: lexical rules with no model, the
same at write time (lore.service.memory), at session start (lore.core.session_start, in the hook),
in search and in `lore tidy`. Pure, and cheap enough for the hook: a few regular expressions and set
operations per item (docs/design.md, Duplicates and conflicts).

- **Same** (an exact duplicate): the same words once case, whitespace and punctuation are set
  aside (`key`), about the same subject.
- **Similar** (a near duplicate): at least SIMILAR of their content words shared (Jaccard over the
  words left after STOPWORDS, lightly stemmed) when both name the same subject, SIMILAR_BARE when
  one has none (then each must mention the word the other leads with: `Gina's favourite style` is
  not about Jon), with no sign of a change between them: a number on each side the other lacks
  (port 8080 / 9090), or a change word (`not`, `anymore`, `instead`, ...) on one side only.
- **Conflict** (facts only): about the same subject, at least CONFLICT_MIN of the content words
  shared, not similar, and either a sign of a change or words on both sides the other lacks
  (`Deploys go to fly.io` / `Deploys go to Render`).
- A **change statement** (`Tests now need xvfb instead of PostgreSQL`, `CI moved from Buildkite to
  CircleCI`) is compared with a plain one as what it says is true now (its words less the value it
  says went away, `now`): `Tests require xvfb` repeats it, `Tests require PostgreSQL` does not.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import lru_cache
from typing import Generic, TypeVar

from lore.core import changes

T = TypeVar("T")

SIMILAR = 0.45  # shared content words (Jaccard) for a near duplicate about the same subject
SIMILAR_BARE = 0.55  # ... when one of them has no subject (every note): more words must match
CONFLICT_MIN = 0.5  # ... for a likely conflict (with a sign of a change between them)
SWAP = 2  # at most this many words on each side in a value put in place of another
# Two short statements about one subject naming the same values (every name or number of each is in
# the other) are similar from ANCHOR_SHARE of their words on: `acme-api targets Python 3.13` /
# `The project runs on Python 3.13`.
ANCHOR_WORDS = 6
ANCHOR_SHARE = 0.3
SLOT_RUN = 3  # at most this many words on each side in one run of `_slot`'s filled slots
SLOT_SHARED = 3  # shared words that make the rest a slot filled differently (`_slot`)
MAX_WORDS = 400  # content words compared per item (a long note: its first ones)

_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")

# English function words and the verbs that carry no fact of their own: left out of the comparison.
STOPWORDS = frozenset(
    """a an the and or but nor of to in on at for with by from as into onto about after before over
    under again once up down out off than then there here also just very more most some any all each
    both few other such own same so too can could would should will shall may might must is are was
    were be been being am has have had having do does did doing it its this that these those i me my
    we us our you your he him his she her they them their what which who whom whose when where why
    how if while because until via per s t d ll re ve m one""".split()  # noqa: SIM905 (a word list reads better as words)
)
# Words that mark a change: one side has them and the other does not (`..., not fly.io anymore`).
CUES = frozenset(
    """not anymore longer instead now nowadays replaced replaces replacing switched
    moved migrated renamed deprecated removed dropped stopped changed became""".split()  # noqa: SIM905 (a word list reads better as words)
)


def _fold(text: str) -> str:
    return text.lower() if text.isascii() else unicodedata.normalize("NFKC", text).casefold()


def key(text: str) -> str:
    """The text with case, whitespace and punctuation set aside: equal keys are the same words."""
    return " ".join(_WORD.findall(_fold(text)))


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A light English stem: `tests` -> `test`, `deploys` -> `deploy`, `running` -> `run`."""
    if len(word) <= 3 or word.isdigit():
        return word
    if len(word) >= 6 and word.endswith("er") and not word.endswith("eer"):
        return word[:-2]  # linter -> lint, server -> serv (as served -> serv)
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "zes", "sses")):
                continue
            base = word[: -len(suffix)] + keep
            if suffix in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running -> run, stopped -> stop
            return base
    return word


@dataclass(frozen=True)
class Text:
    """What the rules compare of one item: its key, content words, change words and numbers."""

    key: str
    words: frozenset[str]
    cues: frozenset[str]
    numbers: frozenset[str]
    subject: str | None  # case-folded; None: none
    lead: str | None = None  # the first content word: what the sentence is about
    marked: frozenset[str] = frozenset()  # words written like a name or a value (Render, fly.io, 3.12)
    # A change statement's words less those of the value it says went away (`now need xvfb instead
    # of PostgreSQL`: without `postgresql`); None: not a change statement lore can read.
    now: frozenset[str] | None = None
    order: tuple[str, ...] = ()  # the content words in the order written (`_slot`)
    settings: frozenset[str] = frozenset()  # names given a value with `=` (`DEBUG_SQL` in `DEBUG_SQL=1`)
    # Words written as an acronym (`CI`, `PR`, `AWS`): (the word as compared, its letters).
    acronyms: frozenset[tuple[str, str]] = frozenset()
    # The words of the value a change statement says went away (`instead of Fly.io`: `fly.io`).
    gone: frozenset[str] = frozenset()

    def current(self) -> Text:
        """A change statement as what it says is true now: a plain statement of the new value."""
        if self.now is None:
            return self
        now = self.now
        return replace(
            self,
            words=now,
            cues=frozenset(),
            numbers=self.numbers & now,
            marked=self.marked & now,
            now=None,
            order=tuple(w for w in self.order if w in now),
            settings=self.settings & now,
            acronyms=frozenset(x for x in self.acronyms if x[0] in now),
        )

    def spelled(self, at: int, size: int, acronym: str) -> Text:
        """This text with the `size` words from `at` in `order` read as `acronym` (they spell it)."""
        run = frozenset(self.order[at : at + size])
        return replace(
            self,
            words=(self.words - run) | {acronym},
            lead=acronym if self.lead in run else self.lead,
            marked=self.marked - run,
            now=None if self.now is None else (self.now - run) | ({acronym} if run <= self.now else set()),
            order=(*self.order[:at], acronym, *self.order[at + size :]),
        )

    @classmethod
    def of(cls, text: str, subject: str | None = None) -> Text:
        words: set[str] = set()
        cues: set[str] = set()
        numbers: set[str] = set()
        marked: set[str] = set()
        settings: set[str] = set()
        acronyms: set[tuple[str, str]] = set()
        lead = None
        folded = _fold(text)
        same = len(text) == len(folded)  # positions of `text` hold in `folded` (the usual case)
        source = text if same else folded
        placed: list[tuple[str, int]] = []  # each word and where it starts
        for found in _TERM.finditer(source):
            raw = found.group()
            token = raw.lower() if same else raw
            if raw.isalpha():  # most terms: a plain word
                if token in CUES:
                    cues.add(token)
                    continue
                if token in STOPWORDS or len(token) < 2:
                    continue
                word = stem(token)
                if raw[0].isupper() and not _starts_sentence(source, found.start()):
                    marked.add(word)
                if 2 <= len(raw) <= 5 and raw.isupper() and raw.isascii():
                    acronyms.add((word, token))
            else:
                if token in CUES:
                    cues.add(token)
                    continue
                if _DIGIT.search(token):
                    numbers.add(token)
                elif token in STOPWORDS or len(token) < 2:
                    continue
                word = token
                if _VALUE.search(raw) or (raw[0].isupper() and not _starts_sentence(source, found.start())):
                    marked.add(word)
            if source.startswith("=", found.end()):
                settings.add(word)  # `NAME=value`: the name of a setting, a name
                marked.add(word)
            elif found.start() and source[found.start() - 1] == "=":
                marked.add(word)  # ... and its value, written as one (`NODE_ENV=production`)
            lead = lead or word
            words.add(word)
            placed.append((word, found.start()))
            if len(words) >= MAX_WORDS:
                break
        about = _fold(subject).strip() if subject else None
        now, gone = changes.read(source, placed) if cues or "(" in source else (None, frozenset[str]())
        return cls(
            key(text),
            frozenset(words),
            frozenset(cues),
            frozenset(numbers),
            about or None,
            lead,
            frozenset(marked),
            now,
            tuple(w for w, _ in placed),
            frozenset(settings),
            frozenset(acronyms),
            gone,
        )


# A term: a word, or words joined by . - / : (`fly.io`, `make-test`, `src/app.py`, `test:ci`).
_TERM = re.compile(r"\w+(?:[.\-/:]\w+)*")
_VALUE = re.compile(r"\d|[.\-/:_]")


def _starts_sentence(text: str, at: int) -> bool:
    i = at - 1
    while i >= 0 and text[i] in " \t\"'`([":
        i -= 1
    return i < 0 or text[i] in ".!?:;\n"


def overlap(a: Text, b: Text) -> float:
    """Shared content words over all of both (Jaccard), 0 to 1."""
    union = len(a.words | b.words)
    return len(a.words & b.words) / union if union else (1.0 if a.key == b.key else 0.0)


def _changed(a: Text, b: Text) -> bool:
    """A sign that one says something different: a change word on one side only, or a number on
    each side that the other lacks."""
    return (a.cues != b.cues) or bool((a.numbers - b.numbers) and (b.numbers - a.numbers))


def _swapped(a: Text, b: Text) -> bool:
    """One value put in place of another: each side has at most SWAP words the other lacks, and one
    of them is written like a name or a value (`Deploys go to Render` / `... to fly.io`)."""
    only_a, only_b = a.words - b.words, b.words - a.words
    if not (only_a and only_b) or len(only_a) > SWAP or len(only_b) > SWAP:
        return False
    if only_a & a.settings and only_b & b.settings:
        return False  # a setting put in place of another (`DEBUG_SQL=1` / `NO_CACHE=1`): two facts
    return bool((only_a & _names(a, b)) or (only_b & _names(b, a)))


def _names(a: Text, b: Text) -> frozenset[str]:
    """`a`'s words written like a name or a value, but for the subject of either (`We deploy
    acme-api to ...` about acme-api names nothing new)."""
    return a.marked - {a.subject, b.subject}


def _other_names(a: Text, b: Text) -> bool:
    """Each names something the other does not (`acme-api` / `acme-web`, `pytest -q` / `test:ci`):
    whatever else they share, they are about different things."""
    return bool(((a.words - b.words) & _names(a, b)) and ((b.words - a.words) & _names(b, a)))


def _anchored(a: Text, b: Text) -> bool:
    """Short statements about one subject that name the same values: each has a name or a number,
    and every one of them is in the other."""
    if a.subject is None or a.subject != b.subject:
        return False
    if len(a.words) > ANCHOR_WORDS or len(b.words) > ANCHOR_WORDS:
        return False
    names_a, names_b = _names(a, b), _names(b, a)
    return bool(names_a and names_b and names_a <= b.words and names_b <= a.words)


SAME, SIMILAR_TO, CONFLICTS = "same", "similar", "conflict"


def relation(new: Text, old: Text, *, conflicts: bool = True) -> str | None:
    """How `new` relates to `old`: SAME, SIMILAR_TO, CONFLICTS (only when `conflicts`: facts), or
    None (unrelated). A change statement against a plain one is read as what it says is true now
    (`Text.current`)."""
    if new.key == old.key and new.subject == old.subject:
        return SAME
    if not (new.subject is None or old.subject is None or new.subject == old.subject):
        return None
    if new.acronyms or old.acronyms:  # `CI …` / `Continuous integration …`
        new, old = _spelled_out(new, old.acronyms), _spelled_out(old, new.acronyms)
    a, b = _as_now(new, old), _as_now(old, new)
    score = overlap(a, b)
    # Two short statements naming the same values need not lead alike (`The dev server listens on
    # port 3000` / `Locally the app is served on port 3000`).
    if score >= ANCHOR_SHARE and _anchored(a, b) and _agree(a, b):
        return SIMILAR_TO
    # Each about something the other does not mention (`the cli module …` / `the index module …`);
    # a text may lead with its subject.
    leads = {new.lead, old.lead} - {new.subject, old.subject}
    if len(leads) == 2 and new.lead not in old.words and old.lead not in new.words:
        return None
    needed = SIMILAR if new.subject is not None and old.subject is not None else SIMILAR_BARE
    if score >= needed and _agree(a, b):
        return SIMILAR_TO
    if a is not new or b is not old:
        score = overlap(new, old)
    if (
        conflicts
        and new.subject == old.subject
        and score >= CONFLICT_MIN
        and (_changed(new, old) or _swapped(new, old))
    ):
        return CONFLICTS
    return None


def _spelled_out(t: Text, acronyms: frozenset[tuple[str, str]]) -> Text:
    """`t` with each run of consecutive content words that spells one of `acronyms` (the other
    text's) read as that acronym: `continuous integration` as `ci`, `pull request` as `pr`."""
    for word, letters in acronyms:
        if word in t.words:
            continue
        size = len(letters)
        for at in range(len(t.order) - size + 1):
            if all(w[0] == c for w, c in zip(t.order[at : at + size], letters, strict=True)):
                t = t.spelled(at, size, word)
                break
    return t


def _as_now(a: Text, b: Text) -> Text:
    """`a` as what it says is true now when it is a change statement and `b` a plain one."""
    return a.current() if a.now is not None and not b.cues else a


def _agree(a: Text, b: Text) -> bool:
    """No sign that they say different things: no change word on one side only, no value swapped
    for another, no name on each side the other lacks, no slot filled differently."""
    return not _changed(a, b) and not _swapped(a, b) and not _other_names(a, b) and not _slot(a, b)


def _slot(a: Text, b: Text) -> bool:
    """One sentence with its slots filled differently: the same words in the same order but for
    short runs (at most SLOT_RUN words on each side) put in place of each other, with at least
    SLOT_SHARED words the same (`Bug in billing: a double charge …` / `Bug in auth: a crash …`,
    `… level info` / `… level warning`), or only the last word put in place of another after at
    least 2 the same (`Install dependencies with npm` / `… with yarn`: what a sentence ends with is
    its value). A restatement moves, adds or drops words."""
    if not a.order or not b.order:
        return False
    shared = 0
    replaced = last = False
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a.order, b.order, autojunk=False).get_opcodes():
        if tag == "equal":
            shared += i2 - i1
        elif tag == "replace" and i2 - i1 <= SLOT_RUN and j2 - j1 <= SLOT_RUN:
            replaced = True
            last = i2 - i1 == j2 - j1 == 1 and i2 == len(a.order) and j2 == len(b.order)
        else:
            return False
    return replaced and (shared >= SLOT_SHARED or (last and shared >= 2))


@dataclass(frozen=True)
class Group(Generic[T]):
    """One item shown, the items that say the same (hidden behind it), and those it may
    contradict (shown too)."""

    item: T
    similar: tuple[T, ...] = ()
    conflicts: tuple[T, ...] = ()


class Folder(Generic[T]):
    """Items added one at a time, each near duplicate folded into the first kept item it repeats
    (which stays where it was); with `conflicts`, each kept item also lists the earlier kept items
    it may contradict. Compares only items sharing a content word (an inverted index), so a
    session start's facts cost about a millisecond."""

    def __init__(self, text: Callable[[T], Text], *, conflicts: bool = False) -> None:
        self._text, self._conflicts = text, conflicts
        self._items: list[T] = []
        self._texts: list[Text] = []
        self.kept: list[int] = []  # indexes of the items kept, in order
        self._folded: dict[int, list[int]] = {}
        self._clashes: dict[int, list[int]] = {}
        self._index: dict[str, list[int]] = {}

    def add(self, item: T) -> bool:
        """Add `item`: True when it is kept (a new thing), False when folded into an earlier one."""
        i = len(self._items)
        t = self._text(item)
        self._items.append(item)
        self._texts.append(t)
        seen: Counter[int] = Counter()
        index = self._index
        for word in t.words:
            postings = index.get(word)
            if postings:
                seen.update(postings)  # counted in C
        size = len(t.words)
        against: list[int] = []
        # Too few shared words to be similar or a conflict (a Jaccard of at least `share` needs as
        # many shared words as that share of each side): not compared at all.
        share = min(SIMILAR, SIMILAR_BARE, CONFLICT_MIN, ANCHOR_SHARE)
        if seen:
            least = share * size
            candidates = sorted((j for j, n in seen.items() if n >= least), key=lambda j: -seen[j])
        else:
            candidates = _same_key(t, self._texts, self.kept)
        texts = self._texts
        for j in candidates:
            if seen and seen[j] < share * len(texts[j].words):
                continue
            found = relation(t, texts[j], conflicts=self._conflicts)
            if found in (SAME, SIMILAR_TO):
                self._folded.setdefault(j, []).append(i)
                return False
            if found == CONFLICTS:
                against.append(j)
        self.kept.append(i)
        if against:
            self._clashes[i] = sorted(against)
        for word in t.words:
            self._index.setdefault(word, []).append(i)
        return True

    def groups(self) -> list[Group[T]]:
        items = self._items
        return [
            Group(
                items[i],
                tuple(items[j] for j in self._folded.get(i, ())),
                tuple(items[j] for j in self._clashes.get(i, ())),
            )
            for i in self.kept
        ]


def collapse(items: Sequence[T], text: Callable[[T], Text], *, conflicts: bool = False) -> list[Group[T]]:
    """`items` in their order with each near duplicate folded into the first item it repeats
    (lore.core.similarity.Folder)."""
    folder = Folder(text, conflicts=conflicts)
    for item in items:
        folder.add(item)
    return folder.groups()


def _same_key(t: Text, texts: Sequence[Text], kept: Iterable[int]) -> list[int]:
    """Items with no content word at all (`It is.`) match only their exact copies."""
    if t.words:
        return []
    return [j for j in kept if texts[j].key == t.key]
