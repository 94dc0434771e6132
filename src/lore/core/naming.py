"""What a new fact or note is to the current ones, in two verdicts (docs/design.md, Duplicates and
conflicts): **folded** only where lore is certain (lore.core.similarity: the same words, a near
duplicate by the word rule), and **named** where it is likely: a line in the write's answer and a tidy
candidate, with no effect on what is shown, settled by the agent that wrote it.

- **Likely the same** (a restatement the word rule cannot be sure of): a score of meaning and words,
  `W_MEANING` x the cosine of their vectors + (1 - `W_MEANING`) x the share of content words
  (similarity.overlap), at least `NAMED_AT`, about the same subject. Both numbers were chosen on
  labelled pairs and reported on pairs held out from that choice (docs/benchmarks.md, "Naming").
  Without a vector on either side (no embedder, or the worker has not embedded it yet), words alone
  at `NAMED_WORDS`.
- **Likely replaced**: a change statement (`X instead of Y`, `now X (was Y)`, `moved from Y to X`,
  `no longer Y`, `Y was dropped`) against a fact that states Y about the same thing: the words of Y
  (its names or values, when it has some) are in the older fact, and the two share another content
  word, or a subject.

Pure, and free of numpy: the cosine of two vectors is a few hundred multiplications.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from lore.core import similarity
from lore.core.similarity import CONFLICTS, SAME, SIMILAR_TO, Text

T = TypeVar("T")

W_MEANING = 0.7  # the cosine's weight in the score; the share of words has the rest
NAMED_AT = 0.62  # the score from which two items are named as likely the same
NAMED_WORDS = 0.36  # ... when either has no vector: the share of content words alone
NAMED_MAX = 3  # candidates a write's answer names, best first

_DIGITS = re.compile(r"\d+(?:\.\d+)*")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors of one model (0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def score(new: Text, old: Text, meaning: float | None) -> float:
    """How likely `new` restates `old`: the weighted cosine and share of words (words alone, scaled
    to the same threshold, when `meaning` is None)."""
    words = similarity.overlap(similarity._as_now(new, old), similarity._as_now(old, new))
    if meaning is None:
        return words * NAMED_AT / NAMED_WORDS
    return W_MEANING * meaning + (1 - W_MEANING) * words


def _same_subject(a: Text, b: Text) -> bool:
    return a.subject is None or b.subject is None or a.subject == b.subject


def unlike(new: Text, old: Text) -> bool:
    """A sign that two texts say different things however close their meaning: a number on each
    side the other lacks (`returns 422` / `returns 503`), each read as its value (`60 ns` and
    `60ns` are one). Such a pair is never named as likely the same. (The rule's other guards, a slot
    filled differently or a name on each side, were measured as vetoes too: they cost LoCoMo recall,
    0.852 -> 0.742 and 0.828 held out, for no precision.)"""
    a, b = _values(similarity._as_now(new, old)), _values(similarity._as_now(old, new))
    return bool((a - b) and (b - a))


def _values(t: Text) -> frozenset[str]:
    """The value of each number `t` has: its digits, a unit or a letter written onto them set aside
    (`60ns` and `60 ns`, `V2` and `2` are one value; `x86_64` and `arm64`, `HS256` and `3.12` are
    not)."""
    return frozenset("_".join(_DIGITS.findall(n)) for n in t.numbers)


def replaces(new: Text, old: Text) -> bool:
    """Whether change statement `new` says it replaced what `old` states: the value it says went
    away is in `old` (its names or values when it has some, else all its words), `new` says
    something `old` does not (the new value), and they share another content word or a subject."""
    if not new.gone or old.gone or not _same_subject(new, old):
        return False
    key = (new.gone & new.marked) or (new.gone & new.numbers) or new.gone
    if not key <= old.words:
        return False
    if not new.words - new.gone - old.words:
        return False  # `new` says nothing `old` does not: no new value
    shared = (new.words & old.words) - new.gone
    return bool(shared) or (new.subject is not None and new.subject == old.subject)


@dataclass(frozen=True)
class Verdict(Generic[T]):
    """What a new item is to the items it was compared with: a copy of one (`same`: nothing is
    written); near duplicates (`similar`, folded at session start); likely restatements (`likely`,
    named only); likely conflicts and facts it likely replaces (`conflicts`, `replaces`). Best
    first in each."""

    same: T | None = None
    similar: tuple[T, ...] = ()
    conflicts: tuple[T, ...] = ()
    likely: tuple[T, ...] = ()
    replaces: tuple[T, ...] = ()

    @property
    def named(self) -> bool:
        return bool(self.similar or self.conflicts or self.likely or self.replaces)


def classify(
    new: Text,
    olds: Iterable[T],
    text: Callable[[T], Text],
    *,
    conflicts: bool = False,
    meaning: Callable[[T], float | None] | None = None,
) -> Verdict[T]:
    """`new` against each of `olds` (the write-time check): the first copy found wins. `meaning`:
    the cosine of the new item's vector and an old one's (its None: no vector, words alone); without
    it (notes) nothing is named as likely the same."""
    similar: list[T] = []
    clashing: list[T] = []
    replaced: list[T] = []
    likely: list[tuple[float, int, T]] = []
    for i, old in enumerate(olds):
        other = text(old)
        found = similarity.relation(new, other, conflicts=conflicts)
        if found == SAME:
            return Verdict(old)
        if found == SIMILAR_TO:
            similar.append(old)
        elif conflicts and replaces(new, other):
            replaced.append(old)
        elif found == CONFLICTS:
            clashing.append(old)
        elif meaning is not None and _same_subject(new, other) and not unlike(new, other):
            cos = meaning(old) if meaning is not None else None
            value = score(new, other, cos)
            if value >= NAMED_AT:
                likely.append((-value, i, old))
    best = tuple(old for _, _, old in sorted(likely, key=lambda x: (x[0], x[1])))
    return Verdict(None, tuple(similar), tuple(clashing), best, tuple(replaced))
