"""Stored text made safe to place inside lore's envelope (lore.core.envelope): no tag of either envelope
(`lore-memory`, `lore-inbox`) can be opened or closed from it, however it is spelled. Pure, standard
library only: the hooks import it (docs/design.md, Content and budget).

A tag is an opener followed by the letters of a tag name, each character read as a reader reads it:
  - through its UTS #39 skeleton, case-insensitively (lore.core.lookalikes: Cyrillic `о`, Greek `ο`,
    `0` for `o`; `1`, `I` and `|` for `l`; `rn` for `m`; full-width and mathematical letters), and
    with anything that passes for `<` or `[` as an opener (`˂`, `ᐸ`, `‹`, `〈`, `⟨`, `⟦`, `〚`, `⁅`, ...);
  - past spaces, invisible, combining and control characters, dashes, underscores, slashes and
    backslashes, however many (no look-ahead window);
  - with an escape read as the character it stands for: an HTML character reference (`&lt;`, `&LT`,
    `&#60;`, `&#x3c;`, escaped again as `&amp;lt;`), a `\\u003c` or `\\x3c` escape, a `%3C`.
An opener that begins a tag becomes U+FFFD (one UTF-16 unit, and no look-alike of anything: a budget
counted before stays true; an escape shrinks to it). One pass: each character is read at most twice.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from lore.core import lookalikes

REPLACEMENT = "\ufffd"
_OPEN = "<"  # what every opener folds to
_SKIPPED_CATEGORIES = frozenset(("Cf", "Mn", "Me", "Cc", "Pd", "Pc", "Zs", "Zl", "Zp"))


def _table() -> dict[str, str]:
    table = {ch: fold for fold, chars in lookalikes.FOLDS.items() for ch in chars}
    table.update(dict.fromkeys(lookalikes.SKIPPED, ""))
    table.update(dict.fromkeys(lookalikes.OPENERS, _OPEN))
    return table


_FOLD = _table()
# Where a tag can begin: an opener, or an escape that may stand for one.
_CANDIDATE = re.compile("[" + re.escape(lookalikes.OPENERS) + "&%\\\\]")
_ESCAPE = re.compile(
    r"&(?:amp;)*(?:#[xX]0*(?P<hex>[0-9a-fA-F]{1,6});?|#0*(?P<dec>[0-9]{1,7});?"
    r"|(?P<name>[A-Za-z][A-Za-z0-9]{0,31});|(?P<legacy>lt|LT))"
    r"|\\(?:u(?P<u>[0-9a-fA-F]{4})|x(?P<x>[0-9a-fA-F]{2}))"
    r"|%(?P<pct>[0-9a-fA-F]{2})"
)
# Terminal control sequences (CSI, OSC, ...) and the characters that reorder or hide text.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]"
)


def printable(text: str) -> str:
    """`text` without terminal control sequences (`ESC[2J`, `ESC]0;…`), other control characters
    (newlines and tabs stay) or bidirectional overrides: what a terminal or a model would act on."""
    return _CONTROL.sub("", text) if _CONTROL.search(text) else text


def inert(text: str) -> str:
    """Stored text made safe inside lore's envelope, in either fence: every opener that begins a tag of
    either envelope becomes U+FFFD; terminal control sequences and text-reordering characters go
    (`printable`). Ordinary text (`List<String>`, `[x](y)`, `<lorem>`) is unchanged."""
    text = printable(text)
    spans = tag_openers(text)
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], REPLACEMENT]
        last = end
    out.append(text[last:])
    return "".join(out)


def tag_openers(text: str) -> list[tuple[int, int]]:
    """The spans of `text` (start, end) that open a tag of lore's envelopes: one character, or the
    escape that stands for it. A scan starts at each opener and stops at the first character that
    is neither read past nor the next letter of a tag name; the next search starts there, so every
    character is read at most twice whatever the text."""
    found: list[tuple[int, int]] = []
    pos, n = 0, len(text)
    while (candidate := _CANDIDATE.search(text, pos)) is not None:
        start = candidate.start()
        end, folded = _unit(text, start)
        pos = end
        if folded != _OPEN:
            continue
        seen, i = "", end
        while i < n:
            after, got = _unit(text, i)
            if got is None or got == _OPEN:
                break
            if got:
                seen += got
                if any(seen.startswith(name) for name in lookalikes.NAMES):
                    found.append((start, end))
                    break
                if not any(name.startswith(seen) for name in lookalikes.NAMES):
                    break
            i = after
        pos = max(pos, i)
    return found


def _unit(text: str, i: int) -> tuple[int, str | None]:
    """The unit of `text` at `i` (one character, or an escape) and how it reads: a fold ('' when it is
    read past, `<` for an opener), or None (it ends a tag name)."""
    ch = text[i]
    if ch in "&%\\" and (escape := _ESCAPE.match(text, i)) is not None:
        decoded = _decoded(escape)
        if decoded is not None:
            return escape.end(), fold(decoded)
    return i + 1, fold(ch)


def fold(ch: str) -> str | None:
    """How one character reads inside a tag: its fold ('' when it is read past, `<` for an opener),
    or None when it cannot be part of a tag name."""
    got = _FOLD.get(ch)
    if got is not None:
        return got
    if ch.isspace() or unicodedata.category(ch) in _SKIPPED_CATEGORIES:
        return ""
    return None


def _decoded(escape: re.Match[str]) -> str | None:
    if escape["legacy"]:
        return "<"
    if escape["name"]:
        return entities().get(escape["name"])
    digits = escape["hex"] or escape["u"] or escape["x"] or escape["pct"]
    code = int(digits, 16) if digits else int(escape["dec"])
    if escape.group(0).startswith("&") and code == 0x8B:  # HTML reads 128-159 as windows-1252
        return "\u2039"
    return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else None


@cache
def entities() -> dict[str, str]:
    """HTML named character references of the characters that matter (read the first time one is met)."""
    return dict(pair.split("=", 1) for pair in lookalikes.ENTITIES.split(" "))
