"""Input limits, checked before anything is written (docs/design.md, Input limits). Each error says
what and how to fix."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from lore.core import ids
from lore.core.errors import InvalidInput

MAX_STATEMENT = 1_000
MAX_BODY_BYTES = 32 * 1024
MAX_TITLE = 200
MAX_SUBJECT = 200
MAX_TAGS = 16
MAX_TAG = 64
MAX_REASON = 1_000
NOTE_KINDS = (
    "brief",
    "product",
    "pattern",
    "tech",
    "active",
    "progress",
    "devenv",
    "task",
    "plan",
    "decision",
    "note",
)
# Typed, directed links between two notes (link_notes).
RELATIONS = ("depends_on", "blocks", "relates_to", "supersedes", "part_of", "refines", "cross_ref")
# Searchable too, written only by lore itself: a handoff (the session-end hook, migration 0007).
SEARCH_KINDS = (*NOTE_KINDS, "handoff")


def text(value: object, field: str, *, max_chars: int, required: bool = True) -> str | None:
    if value is None or (isinstance(value, str) and not value.strip() and not required):
        if required:
            raise InvalidInput(f"{field} is required.", f"Pass {field} as a non-empty string.")
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}.", f"Pass {field} as text.")
    if "\x00" in value:
        raise InvalidInput(f"{field} contains a NUL byte.", "Remove the \\u0000 characters and retry.")
    stripped = value.strip()
    if not stripped:
        raise InvalidInput(f"{field} is empty.", f"Pass {field} as a non-empty string.")
    if not any(_visible(ch) for ch in stripped):
        raise InvalidInput(
            f"{field} has no visible character (only spaces, zero-width or control characters).",
            f"Pass {field} as text a person can read.",
        )
    if len(stripped) > max_chars:
        raise InvalidInput(
            f"{field} is {len(stripped):,} characters; the limit is {max_chars:,}.",
            f"Shorten {field}, or split it into several entries.",
        )
    return stripped


_MARKS = ("Sm", "Sc", "Sk")  # math, currency and modifier symbols: punctuation for this purpose


def _visible(ch: str) -> bool:
    return not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Cc", "Mn", "Me", "Zs", "Zl", "Zp")


def body(value: object) -> str:
    """A note's body: one limit, in bytes of UTF-8, said the same way whatever the size (a 2 MB body
    was told "the limit is 327,680" characters, a 108 KB one "32,768" bytes)."""
    if isinstance(value, str):
        size = len(value.strip().encode("utf-8", "surrogatepass"))
        if size > MAX_BODY_BYTES:
            raise InvalidInput(
                f"body is {size:,} bytes; the limit is {MAX_BODY_BYTES:,} bytes (32 KiB).",
                "Split the note into several notes and link them, or keep only what a later session needs.",
            )
    checked = text(value, "body", max_chars=MAX_BODY_BYTES)
    assert checked is not None
    _reject_surrogates(checked, "body")
    return checked


def _reject_surrogates(value: str, field: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(
            f"{field} holds invalid unicode (a lone surrogate).", "Send valid UTF-8 text."
        ) from None


def statement(value: object) -> str:
    """A fact's statement: 1 to MAX_STATEMENT characters, not only punctuation (`-`, `...`, `—`, `+`:
    it says nothing; `lore facts add -` once stored `-`). A letter, a digit or an emoji will do."""
    checked = text(value, "statement", max_chars=MAX_STATEMENT)
    assert checked is not None
    _reject_surrogates(checked, "statement")
    if all(
        unicodedata.category(ch)[0] == "P" or unicodedata.category(ch) in _MARKS
        for ch in checked
        if _visible(ch)
    ):
        raise InvalidInput(
            f"statement {checked[:40]!r} is only punctuation: it says nothing.",
            "Write the fact in words, e.g. 'CI runs on every push'.",
        )
    return checked


def optional(value: object, field: str, max_chars: int) -> str | None:
    checked = text(value, field, max_chars=max_chars, required=False)
    if checked is not None:
        _reject_surrogates(checked, field)
    return checked


def kind(value: object) -> str:
    if value is None:
        return "note"
    if not isinstance(value, str) or value not in NOTE_KINDS:
        raise InvalidInput(f"Unknown note kind {str(value)[:40]!r}.", f"Use one of: {', '.join(NOTE_KINDS)}.")
    return value


def search_kind(value: object) -> str:
    """A kind to filter a search by: any kind a note can have, `handoff` included."""
    if not isinstance(value, str) or value not in SEARCH_KINDS:
        raise InvalidInput(
            f"Unknown note kind {str(value)[:40]!r}.", f"Use one of: {', '.join(SEARCH_KINDS)}."
        )
    return value


def tags(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput("tags must be a list of strings.", 'Pass tags like ["deploy", "ci"].')
    if len(value) > MAX_TAGS:
        raise InvalidInput(f"{len(value)} tags; the limit is {MAX_TAGS}.", "Keep the most useful tags.")
    cleaned: list[str] = []
    for tag in value:
        checked = text(tag, "each tag", max_chars=MAX_TAG)
        assert checked is not None
        _reject_surrogates(checked, "tag")
        if checked.lower() not in cleaned:
            cleaned.append(checked.lower())
    return cleaned


def limit(value: object, field: str, low: int, high: int) -> int:
    """A whole number from `low` to `high` (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(
            f"{field} must be a whole number between {low} and {high}, got {repr(value)[:40]}.",
            f"Pass {field} from {low} to {high}, or leave it out.",
        )
    return value


def item_id(value: object, *, expect: str | None = None) -> tuple[str, int]:
    """`f_12` / `n_7` -> ("f", 12). `expect` restricts the prefix."""
    if not isinstance(value, str):
        raise InvalidInput(f"id must be a string like f_12 or n_7, got {type(value).__name__}.", _ID_HINT)
    found = ids.match(value, "fn")
    if found is None:
        raise InvalidInput(f"{value[:40]!r} is not a lore id.", _ID_HINT)
    prefix, number = found
    if expect and prefix != expect:
        what = "a fact id (f_…)" if expect == "f" else "a note id (n_…)"
        raise InvalidInput(f"{value} is not {what}.", _ID_HINT)
    return prefix, number


_ID_HINT = "Use an id exactly as a lore tool returned it: f_<number> for facts, n_<number> for notes."


def relation(value: object) -> str:
    if not isinstance(value, str) or value not in RELATIONS:
        raise InvalidInput(f"Unknown relation {str(value)[:40]!r}.", f"Use one of: {', '.join(RELATIONS)}.")
    return value
