"""The values of a row read from an export, each checked against the type of its column in the target
before anything is written (an id that is a list, a NUL byte, a lone surrogate, a timestamp without a
zone): a damaged file is refused with the number of its line, never with a driver's message."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg

from lore.store.transfer.reading import Line, bad, is_int
from lore.store.transfer.tables import IDS, KEYS, TABLES

_INT_RANGE = {"int2": 2**15, "int4": 2**31, "int8": 2**63}
_INT_ARRAYS = {"_int2", "_int4", "_int8"}


@dataclass(frozen=True)
class Column:
    udt: str  # information_schema's udt_name: int8, text, timestamptz, _text, vector, ...
    nullable: bool


def column_types(conn: psycopg.Connection) -> dict[str, dict[str, Column]]:
    rows = conn.execute(
        "SELECT table_name, column_name, udt_name, is_nullable = 'YES' FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = ANY(%s) AND is_generated = 'NEVER'",
        (list(TABLES),),
    ).fetchall()
    out: dict[str, dict[str, Column]] = {t: {} for t in TABLES}
    for table, column, udt, nullable in rows:
        out[table][column] = Column(udt, bool(nullable))
    return out


def check_row(line: Line, table: str, types: dict[str, Column]) -> None:
    """Every value of one row has its column's type (checked before anything is written, so that a
    damaged file is refused with its line, never with a traceback or a driver's message)."""
    for key in KEYS[table]:
        if key not in line.row:
            raise bad(line.number, f"a {table} row has no {key}", "use a file written by `lore export`")
    for column, value in line.row.items():
        problem = _wrong(value, types[column], required=column in KEYS[table], an_id=column in IDS)
        if problem:
            raise bad(line.number, f"{table}.{column} {problem}", "use a file written by `lore export`")


def _wrong(value: object, column: Column, *, required: bool, an_id: bool) -> str | None:
    """What is wrong with `value` for `column` ("must be ..."), or None."""
    if value is None:
        return "must not be null" if required or not column.nullable else None
    udt = column.udt
    if udt in _INT_RANGE:
        if not is_int(value):
            return f"must be an integer, not {_kind(value)}"
        assert isinstance(value, int)
        if not -_INT_RANGE[udt] <= value < _INT_RANGE[udt]:
            return f"is out of range ({udt})"
        return "must be an id (1 or more)" if an_id and value < 1 else None
    if udt in ("text", "varchar", "bpchar"):
        return f"must be a string, not {_kind(value)}" if not isinstance(value, str) else _bad_text(value)
    if udt in ("timestamptz", "timestamp", "date"):
        if not isinstance(value, str):
            return f"must be a timestamp (a string), not {_kind(value)}"
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return "must be a timestamp (ISO 8601, as lore exports it)"
        return (
            "must be a timestamp with a time zone" if udt == "timestamptz" and parsed.tzinfo is None else None
        )
    if udt in _INT_ARRAYS:  # handoffs.tasks: note lineages
        whole = isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
        if not whole:
            return f"must be a list of whole numbers, not {_kind(value)}"
        return None
    if udt.startswith("_"):  # any other array of lore's is text[]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"must be a list of strings, not {_kind(value)}"
        return next((p for p in map(_bad_text, value) if p), None)
    if udt == "vector":
        return (
            f"must be a vector (a string such as [0.1,0.2]), not {_kind(value)}"
            if not isinstance(value, str)
            else _bad_text(value)
        )
    if udt == "bool":
        return None if isinstance(value, bool) else f"must be true or false, not {_kind(value)}"
    return _bad_nested(value)  # json, or a type lore does not use: PostgreSQL decides


def _bad_text(value: str) -> str | None:
    if "\x00" in value:
        return "holds a NUL character, which PostgreSQL text cannot store"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "holds a lone surrogate (not valid UTF-8)"
    return None


def _bad_nested(value: object) -> str | None:
    if isinstance(value, str):
        return _bad_text(value)
    if isinstance(value, list):
        return next((p for p in map(_bad_nested, value) if p), None)
    if isinstance(value, dict):
        return next((p for p in map(_bad_nested, [*value, *value.values()]) if p), None)
    return None


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number with a fraction" if not value.is_integer() else "a number with a decimal point"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
