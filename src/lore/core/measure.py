"""How lore counts text against a client's limit: in UTF-16 code units, what a JavaScript client
measures (never less than Python's own length). Pure."""

from __future__ import annotations


def size(text: str) -> int:
    """Length as a JavaScript client counts it (UTF-16 code units)."""
    return len(text.encode("utf-16-le")) // 2
