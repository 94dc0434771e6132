"""What a detector is: a pattern, the part of its match that is the credential, the judgements it must
pass, and the words a text needs for it to run at all. Tables of them are in `rules` and `providers`."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Spaced:
    """How a token rule is tried on a token with spacing inside it (`scanner.match_spaced`): every form
    of its prefix, the characters its body is made of, and the length of the shortest body."""

    forms: tuple[str, ...]
    alphabet: re.Pattern[str]
    shortest: int


@dataclass(frozen=True)
class Rule:
    kind: str
    source: str  # the pattern, compiled the first time a text needs it (`pattern`)
    # Each match contains one of these (lower-cased): a text without any skips the rule, which keeps a
    # scan of ordinary prose to a few substring searches for most kinds. Empty: the rule always runs.
    hints: tuple[str, ...]
    group: int | str = 0  # the part of the match that is the credential
    accept: Callable[[str], bool] | None = None
    spaced: Spaced | None = None  # a token with a fixed prefix: also tried with spacing taken out
    check: Callable[[re.Match[str]], bool] | None = None  # a judgement that needs the whole match
    gate: str | None = None  # what a text needs for the rule to run (beyond its hints)
    flags: int = 0

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.source, self.flags)

    def gated_out(self, text: str) -> bool:
        return self.gate is not None and _compiled(self.gate, 0).search(text) is None


@functools.cache
def _compiled(source: str, flags: int) -> re.Pattern[str]:
    """Compiled once, when first needed: compiling all 150 patterns cost 14 ms of every importer's
    start-up (the session-end hook's among them), and most texts need a few of them."""
    return re.compile(source, flags)


def rule(
    kind: str,
    pattern: str,
    hints: Sequence[str],
    group: int | str = 0,
    accept: Callable[[str], bool] | None = None,
    flags: int = 0,
    check: Callable[[re.Match[str]], bool] | None = None,
    gate: str | None = None,
) -> Rule:
    return Rule(kind, pattern, tuple(hints), group, accept, check=check, gate=gate, flags=flags)


B = r"(?<![A-Za-z0-9_])"  # start of a token
E = r"(?![A-Za-z0-9_])"  # end of a token
ALNUM = "A-Za-z0-9"
ID = r"A-Za-z0-9_\-"


def token(prefixes: Sequence[str], body: str, *, fold: bool = True) -> str:
    """A token: one of `prefixes` (as written, and, with `fold`, in lower and upper case), not preceded
    by a token character, then `body`. The prefix comes first in the pattern (the start-of-token test
    looks behind from its end) so that the regex engine searches for its letters: four times faster
    than testing the start at every position of a long text."""
    widths = {len(p) for p in prefixes}
    assert len(widths) == 1, prefixes
    alternatives = "|".join(map(re.escape, forms(prefixes, fold)))
    return f"(?:{alternatives})(?<![A-Za-z0-9_].{{{widths.pop()}}})" + body + E


def forms(prefixes: Sequence[str], fold: bool) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for p in prefixes for f in ((p, p.lower(), p.upper()) if fold else (p,))))


def token_rule(
    kind: str,
    prefixes: Sequence[str],
    body: str,
    *,
    alphabet: str,
    shortest: int,
    fold: bool = True,
    accept: Callable[[str], bool] | None = None,
    spacing: bool = True,
) -> Rule:
    """A `token` rule, also tried with the spacing inside a token taken out (unless `spacing` is
    False: a prefix too short or too common in prose to start the spacing pass from)."""
    hints = tuple(dict.fromkeys(p.lower() for p in prefixes))
    spaced = Spaced(forms(prefixes, fold), re.compile(f"[{alphabet}]+"), shortest) if spacing else None
    return Rule(kind, token(prefixes, body, fold=fold), hints, 0, accept, spaced)
