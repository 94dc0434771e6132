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

The thresholds come from bench/month_six.py's labelled restatement pairs (docs/benchmarks.md,
"Month six"; the choice in docs/decisions.md).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")

SIMILAR = 0.5  # shared content words (Jaccard) for a near duplicate about the same subject
SIMILAR_BARE = 0.6  # ... when one of them has no subject (every note): more words must match
CONFLICT_MIN = 0.3  # ... for a likely conflict
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
    """not no never none anymore longer instead now nowadays replaced replaces replacing switched
    moved migrated renamed deprecated removed dropped stopped changed became""".split()  # noqa: SIM905 (a word list reads better as words)
)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def key(text: str) -> str:
    """The text with case, whitespace and punctuation set aside: equal keys are the same words."""
    return " ".join(_WORD.findall(_fold(text)))


def stem(word: str) -> str:
    """A light English stem: `tests` -> `test`, `deploys` -> `deploy`, `running` -> `run`."""
    if len(word) <= 3 or word.isdigit():
        return word
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
    lead: str | None = None  # the first content word: what the text is about when it has no subject

    @classmethod
    def of(cls, text: str, subject: str | None = None) -> Text:
        tokens = _WORD.findall(_fold(text))
        words: set[str] = set()
        cues: set[str] = set()
        numbers: set[str] = set()
        lead = None
        for token in tokens:
            if token in CUES:
                cues.add(token)
                continue
            if _DIGIT.search(token):
                numbers.add(token)
                word = token
            elif token not in STOPWORDS and len(token) > 1:
                word = stem(token)
            else:
                continue
            lead = lead or word
            words.add(word)
            if len(words) >= MAX_WORDS:
                break
        folded = _fold(subject).strip() if subject else None
        return cls(
            " ".join(tokens), frozenset(words), frozenset(cues), frozenset(numbers), folded or None, lead
        )


def overlap(a: Text, b: Text) -> float:
    """Shared content words over all of both (Jaccard), 0 to 1."""
    union = len(a.words | b.words)
    return len(a.words & b.words) / union if union else (1.0 if a.key == b.key else 0.0)


def _changed(a: Text, b: Text) -> bool:
    """A sign that one says something different: a change word on one side only, or a number on
    each side that the other lacks."""
    return (a.cues != b.cues) or bool((a.numbers - b.numbers) and (b.numbers - a.numbers))


SAME, SIMILAR_TO, CONFLICTS = "same", "similar", "conflict"


def relation(new: Text, old: Text, *, conflicts: bool = True) -> str | None:
    """How `new` relates to `old`: SAME, SIMILAR_TO, CONFLICTS (only when `conflicts`: facts), or
    None (unrelated)."""
    compatible = new.subject is None or old.subject is None or new.subject == old.subject
    if new.subject is None or old.subject is None:
        # No subject to go by: what each text leads with must appear in the other (`Gina's favorite
        # style is contemporary` is not about Jon).
        compatible = compatible and (new.lead in old.words or old.lead in new.words)
    if new.key == old.key and new.subject == old.subject:
        return SAME
    if not compatible:
        return None
    score = overlap(new, old)
    changed = _changed(new, old)
    needed = SIMILAR if new.subject is not None and old.subject is not None else SIMILAR_BARE
    if score >= needed and not changed:
        return SIMILAR_TO
    differs = changed or bool((new.words - old.words) and (old.words - new.words))
    if conflicts and new.subject == old.subject and score >= CONFLICT_MIN and differs:
        return CONFLICTS
    return None


@dataclass(frozen=True)
class Group(Generic[T]):
    """One item shown, the items that say the same (hidden behind it), and those it may
    contradict (shown too)."""

    item: T
    similar: tuple[T, ...] = ()
    conflicts: tuple[T, ...] = ()


def collapse(items: Sequence[T], text: Callable[[T], Text], *, conflicts: bool = False) -> list[Group[T]]:
    """`items` in their order with each near duplicate folded into the first item it repeats (which
    stays where it was). With `conflicts`, each kept item also lists the earlier kept items it may
    contradict. Compares only items sharing a content word (an inverted index), so a session
    start's 400 facts cost about a millisecond."""
    texts = [text(item) for item in items]
    kept: list[int] = []
    folded: dict[int, list[int]] = {}
    clashes: dict[int, list[int]] = {}
    index: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        seen: dict[int, int] = {}
        for word in t.words:
            for j in index.get(word, ()):
                seen[j] = seen.get(j, 0) + 1
        home = None
        against: list[int] = []
        size = len(t.words)
        for j in sorted(seen, key=lambda j: (-seen[j], j)) if seen else _same_key(t, texts, kept):
            if seen and seen[j] < CONFLICT_MIN * max(size, len(texts[j].words)):
                continue  # too few shared words to be similar or a conflict
            found = relation(t, texts[j], conflicts=conflicts)
            if found in (SAME, SIMILAR_TO):
                home = j
                break
            if found == CONFLICTS:
                against.append(j)
        if home is not None:
            folded.setdefault(home, []).append(i)
            continue
        kept.append(i)
        if against:
            clashes[i] = sorted(against)
        for word in t.words:
            index.setdefault(word, []).append(i)
    return [
        Group(
            items[i],
            tuple(items[j] for j in folded.get(i, ())),
            tuple(items[j] for j in clashes.get(i, ())),
        )
        for i in kept
    ]


def _same_key(t: Text, texts: Sequence[Text], kept: Iterable[int]) -> list[int]:
    """Items with no content word at all (`It is.`) match only their exact copies."""
    if t.words:
        return []
    return [j for j in kept if texts[j].key == t.key]


@dataclass(frozen=True)
class Verdict(Generic[T]):
    """What a new item is to the items it was compared with: a copy of one (`same`), near
    duplicates of some, likely conflicts with others (best match first in each)."""

    same: T | None = None
    similar: tuple[T, ...] = ()
    conflicts: tuple[T, ...] = ()


def classify(
    new: Text, olds: Iterable[T], text: Callable[[T], Text], *, conflicts: bool = False
) -> Verdict[T]:
    """`new` against each of `olds` (the write-time check): the first copy found wins."""
    similar: list[T] = []
    clashing: list[T] = []
    for old in olds:
        found = relation(new, text(old), conflicts=conflicts)
        if found == SAME:
            return Verdict(old)
        if found == SIMILAR_TO:
            similar.append(old)
        elif found == CONFLICTS:
            clashing.append(old)
    return Verdict(None, tuple(similar), tuple(clashing))
