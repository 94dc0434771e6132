"""lore's envelope as a test reads it (lore.core.envelope): `<lore-memory-NONCE space="…">` …
`</lore-memory-NONCE>` (square brackets for Gemini CLI), and the per-prompt `<lore-inbox-NONCE …>`.

`find` parses the one envelope of a kind in a text (failing the test when there is not exactly one,
or when its two tags disagree); `opens` says whether a text starts with one for a space. `reader_tags`
is the oracle of the property tests: it reads a text as a model might, independently of lore.core.inert's
scanner (html.unescape, percent and backslash escapes decoded, each alone; NFKC, the UTS #39 folds of
lore.core.lookalikes, invisible characters dropped), and counts the tags of either envelope in it.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote

from lore.core import lookalikes

MEMORY, INBOX = "lore-memory", "lore-inbox"
NONCE = r"[0-9a-f]{10}"
_FENCES = {"<>": ("<", ">"), "[]": ("[", "]")}


@dataclass(frozen=True)
class Found:
    kind: str
    nonce: str
    space: str  # as written in the opening tag's attribute (escaped)
    fence: str  # "<>" or "[]"
    text: str  # the envelope, from its opening tag to its closing tag
    start: int  # where it starts in the text searched
    frame: str  # the frame's first line (after the opening tag)
    body: str  # what is between the frame's line and the closing tag

    @property
    def opening(self) -> str:
        left, right = _FENCES[self.fence]
        return f'{left}{self.kind}-{self.nonce} space="{self.space}"{right}'

    @property
    def closing(self) -> str:
        left, right = _FENCES[self.fence]
        return f"{left}/{self.kind}-{self.nonce}{right}"


def _opening_re(kind: str) -> re.Pattern[str]:
    return re.compile(
        r"(?P<left>[<\[])"
        + re.escape(kind)
        + r"-(?P<nonce>"
        + NONCE
        + r') space="(?P<space>[^"\n]*)"(?P<right>[>\]])'
    )


def find(text: str, kind: str = MEMORY) -> Found:
    """The one envelope of `kind` in `text` (in either fence); fails when there is none, more than
    one, or its closing tag is not the one its frame names."""
    openings = list(_opening_re(kind).finditer(text))
    assert len(openings) == 1, f"{len(openings)} opening tags of {kind} in {text[:300]!r}"
    m = openings[0]
    fence = m["left"] + m["right"]
    assert fence in _FENCES, m.group(0)
    left, right = _FENCES[fence]
    closing = f"{left}/{kind}-{m['nonce']}{right}"
    assert text.count(closing) == 1, f"{text.count(closing)} closing tags {closing} in {text[:300]!r}"
    end = text.index(closing) + len(closing)
    whole = text[m.start() : end]
    frame, _, rest = whole[len(m.group(0)) + 1 :].partition("\n")
    assert frame.startswith(f"Only the tag /{kind}-{m['nonce']} ends this block: "), frame
    body = rest[: -len(closing)].removesuffix("\n") if rest else ""
    return Found(kind, m["nonce"], m["space"], fence, whole, m.start(), frame, body)


def opens(text: str, space: str, kind: str = MEMORY, fence: str = "<>") -> bool:
    """Whether `text` starts with the opening tag of `kind` for `space` in `fence` (any nonce)."""
    left, right = _FENCES[fence]
    pattern = re.escape(left + kind) + "-" + NONCE + re.escape(f' space="{space}"{right}') + "\n"
    return re.match(pattern, text) is not None


def any_opening(text: str, kind: str = MEMORY, fence: str = "<>", space: str | None = None) -> bool:
    """Whether `text` holds an opening tag of `kind` in `fence` anywhere (for `space`, if given)."""
    left, right = _FENCES[fence]
    value = '"[^"]*"' if space is None else re.escape(f'"{space}"')
    pattern = re.escape(left + kind) + "-" + NONCE + " space=" + value + re.escape(right)
    return re.search(pattern, text) is not None


# --- the oracle: a text read as a model might -------------------------------------------------------

_FOLD = {ch: fold for fold, chars in lookalikes.FOLDS.items() for ch in chars}
_OPENERS = frozenset(lookalikes.OPENERS)
_SLASHES = frozenset("/\\\u2044\u2215\u2571\u29f8\uff0f\u29f5\u29f9\u2216\uff3c")
_INVISIBLE = ("Cf", "Mn", "Me", "Cc", "Pd", "Pc", "Zs", "Zl", "Zp")
_BACKSLASH = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})")


def variants(text: str) -> list[str]:
    """`text` as written, and with each kind of escape decoded (HTML character references, also
    escaped again as `&amp;lt;`; percent-encoding; `\\u003c` and `\\x3c`), each kind alone."""
    return [
        text,
        html.unescape(re.sub("&(?:amp;)+", "&", text)),
        unquote(text),
        _BACKSLASH.sub(lambda m: chr(int(m[1] or m[2], 16)), text),
    ]


def read(text: str) -> str:
    """`text` as a reader sees a tag in it: `<` for whatever opens one, `/` for any slash, each
    letter by its fold, everything read past dropped; other characters as they are."""
    out = []
    for ch in unicodedata.normalize("NFKC", text):
        if ch in _OPENERS:
            out.append("<")
        elif ch in _SLASHES:
            out.append("/")
        elif ch in _FOLD:
            out.append(_FOLD[ch])
        elif ch in lookalikes.SKIPPED or ch.isspace() or unicodedata.category(ch) in _INVISIBLE:
            continue
        else:
            out.append(ch)
    return "".join(out)


_TAG = re.compile("<(/*)(?:" + "|".join(lookalikes.NAMES) + ")")


def reader_tags(text: str) -> tuple[int, int]:
    """(opening tags, closing tags) of either envelope a reader finds in `text`: the most of each found
    in any of its `variants`."""
    counts = []
    for variant in variants(text):
        found = [m[1] for m in _TAG.finditer(read(variant))]
        counts.append((sum(1 for slash in found if not slash), sum(1 for slash in found if slash)))
    return max(c[0] for c in counts), max(c[1] for c in counts)


_ANY_NONCE = re.compile(r"\b(lore-(?:memory|inbox))-" + NONCE + r"\b")


def unnonced(text: str) -> str:
    """`text` with every envelope's nonce made `NONCE`: two injections of the same memory compare equal."""
    return _ANY_NONCE.sub(r"\1-NONCE", text)
