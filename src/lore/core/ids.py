"""Public ids, formatted and read in one place: `f_<lineage>` for a fact, `n_<lineage>` for a note
(a task is a note), `m_<number>` for a message. Pure: the hooks import it."""

from __future__ import annotations

import re

FACT, NOTE, MESSAGE = "f", "n", "m"
_ID = re.compile(r"^(?P<prefix>[fnm])_(?P<num>[0-9]{1,18})$")


def fact(lineage: int) -> str:
    return f"{FACT}_{lineage}"


def note(lineage: int) -> str:
    return f"{NOTE}_{lineage}"


def message(num: int) -> str:
    return f"{MESSAGE}_{num}"


def match(value: object, prefixes: str = "fnm") -> tuple[str, int] | None:
    """`"f_12"` -> ("f", 12) when its prefix is one of `prefixes`; None for anything else (callers
    raise the error that fits where the id came from)."""
    found = _ID.match(value.strip()) if isinstance(value, str) else None
    if found is None or found["prefix"] not in prefixes:
        return None
    return found["prefix"], int(found["num"])
