"""The text as a person reads it, for a second look: NFKC without invisible characters (`normalised`),
and percent-escapes decoded (`percent_decoded`: `token%3Dghp_…` in a URL or a log). Each copy knows
where its changed runs came from, so that a finding's offsets are always those of the text as given."""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass(frozen=True)
class View:
    """A copy of the scanned text, and where its changed runs came from: (copy start, copy end,
    original start, original end) of each, in order. Offsets outside the runs shift by a constant."""

    text: str
    runs: list[tuple[int, int, int, int]]

    def _run(self, i: int) -> tuple[int, int, int, int] | None:
        k = bisect.bisect_right(self.runs, (i, math.inf)) - 1
        return self.runs[k] if k >= 0 else None

    def start(self, i: int) -> int:
        run = self._run(i)
        if run is None:
            return i
        _, end, o_start, o_end = run
        return o_start if i < end else i - end + o_end

    def end(self, i: int) -> int:
        run = self._run(i - 1)
        if run is None:
            return i
        _, end, _, o_end = run
        return o_end if i <= end else i - end + o_end


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# Unicode's format characters (category Cf, as of Unicode 14, Python 3.11's): invisible, and never part
# of a credential. tests/reliability/test_secrets.py checks the list against `unicodedata`.
FORMAT_CHARACTERS = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


class _Invisible(dict[int, int | None]):
    """str.translate's table of what the normalised copy drops: the format characters above, and
    combining and enclosing marks (categories Mn and Me, variation selectors U+FE00-U+FE0F and
    U+E0100-U+E01EF among them), which a token never holds and which would otherwise stop a match
    (`ghp_abc\u0301def...`). Marks are found as they are met: a character's category is asked once,
    and at most _REMEMBERED characters are kept (a text of every code point cannot grow it without end)."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)) in ("Mn", "Me") else code
        if len(self) < _REMEMBERED:
            self[code] = kept
        return kept


_REMEMBERED = 65_536


_DROP_INVISIBLE = _Invisible({c: None for low, high in FORMAT_CHARACTERS for c in range(low, high + 1)})


def normalised(text: str) -> View | None:
    """NFKC of every non-ASCII run, without format characters (Cf: zero-width spaces and joiners,
    word joiners, BOMs, soft hyphens, bidi controls) or combining marks and variation selectors (Mn,
    Me), which are dropped first so that NFKC does not compose them into the letter before (`g` and
    U+0301 would become `ǵ`); None when that changes nothing. Precomposed letters (`é`) stay."""
    if text.isascii():
        return None
    return _spliced(text, _NON_ASCII, _folded)


def _folded(run: str) -> str:
    visible = run.translate(_DROP_INVISIBLE)
    folded = unicodedata.normalize("NFKC", visible)
    if folded != visible:
        folded = folded.translate(_DROP_INVISIBLE)  # a compatibility form that NFKC decomposes
    return folded


_PERCENT = re.compile(r"(?:%25[0-9A-Fa-f]{2}|%[0-9A-Fa-f]{2})+")  # `%25XX`: an escape escaped again


def percent_decoded(text: str) -> View | None:
    """`text` with every run of percent-escapes decoded (twice: `%253D` is `%3D` encoded again); None
    when it holds none."""
    if "%" not in text:
        return None
    return _spliced(text, _PERCENT, lambda run: unquote(unquote(run, errors="replace"), errors="replace"))


def _spliced(text: str, runs_of: re.Pattern[str], replace: Callable[[str], str]) -> View | None:
    """`text` with each match of `runs_of` replaced, and where each changed run came from; None when
    no replacement changed anything."""
    pieces: list[str] = []
    runs: list[tuple[int, int, int, int]] = []
    last = size = 0
    for match in runs_of.finditer(text):
        start, end = match.span()
        new = replace(match.group())
        pieces.append(text[last:start])
        size += start - last
        if new != match.group():
            runs.append((size, size + len(new), start, end))
        pieces.append(new)
        size += len(new)
        last = end
    if not runs:
        return None
    pieces.append(text[last:])
    return View("".join(pieces), runs)
