"""Reading an export file: each line bounded, the whole file checked (header, known tables, objects,
trailer) before anything is written; a damaged line is refused with its number."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from lore.core.errors import InvalidInput
from lore.store.transfer.tables import FORMAT, TABLES

# The longest line an import reads (characters). A row of lore's is far shorter: a 32 KiB note body,
# even with every character escaped, plus a 1,536-dimension embedding stays under 300 KB.
MAX_LINE = 4 * 1024 * 1024


@dataclass(frozen=True)
class Line:
    number: int
    row: dict[str, Any]


def lines_of(handle: TextIO) -> Iterator[str]:
    """The lines of an export file, each read with a bound: a line longer than MAX_LINE is refused at
    its number, never read whole into memory."""
    number = 0
    while line := handle.readline(MAX_LINE + 1):
        number += 1
        if len(line) > MAX_LINE:
            raise too_long(number)
        yield line


def too_long(number: int) -> InvalidInput:
    return bad(number, f"longer than {MAX_LINE:,} characters", "use a file written by `lore export`")


def parse(lines: Iterable[str]) -> dict[str, list[Line]]:
    """Check the whole file before anything is written: header, known tables, objects, trailer.
    (The values of each row are checked against the target's columns by the importer, also before
    anything is written.)"""
    by_table: dict[str, list[Line]] = {t: [] for t in TABLES}
    header_seen = trailer = False
    count = 0
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE:
            raise too_long(number)
        text = raw.strip()
        if not text:
            continue
        if trailer:
            raise bad(number, "there is data after the end line", "use the file exactly as exported")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise bad(number, f"not JSON ({exc.msg})", "use a file written by `lore export`") from None
        except RecursionError:
            raise bad(number, "JSON nested too deeply", "use a file written by `lore export`") from None
        if not isinstance(obj, dict):
            raise bad(number, "not a JSON object", "use a file written by `lore export`")
        if not header_seen:
            if not is_int(obj.get("lore_export")) or obj.get("lore_export") != FORMAT:
                raise bad(number, "no lore export header", "use a file written by `lore export`")
            header_seen = True
            continue
        if obj.get("end") is True:
            trailer = True
            if not is_int(obj.get("rows")) or obj.get("rows") != count:
                raise bad(
                    number,
                    f"the end line counts {obj.get('rows')} rows but the file has {count}",
                    "the file was edited or damaged; export it again",
                )
            continue
        table, row = obj.get("table"), obj.get("row")
        if not isinstance(table, str) or table not in by_table or not isinstance(row, dict):
            raise bad(number, f"unknown line {text[:60]!r}", "use a file written by `lore export`")
        by_table[table].append(Line(number, row))
        count += 1
    if not header_seen:
        raise InvalidInput("The file is empty.", "Use a file written by `lore export`.")
    if not trailer:
        raise InvalidInput(
            "The export ends early: its end line is missing (cut short while copying or writing?).",
            "Export it again; nothing was imported.",
        )
    return by_table


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def bad(number: int, what: str, hint: str) -> InvalidInput:
    return InvalidInput(
        f"Line {number} of the export: {what}; nothing was imported.", f"{hint.capitalize()}."
    )
