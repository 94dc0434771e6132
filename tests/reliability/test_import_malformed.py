"""`lore import` against files nobody should have to import: a list where an id goes, every column
kind given a value of the wrong type, missing columns, lone surrogates, NUL bytes, huge lines. Always
one short error naming the line (never a traceback), and nothing written: the import is one
transaction and every line is checked before the first insert."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lore.core.errors import InvalidInput
from lore.store import transfer
from reliability.conftest import Project
from reliability.test_transfer import _truncate, apply, second_db, two

__all__ = ["second_db", "two"]  # fixtures, used by name

HISTORY: list[tuple[Any, ...]] = [
    ("fact", "alpha", "deploys with make ship", "acme-api", 3, 30),
    ("revise", 0, "deploys with make release", None, None),
    ("note", "beta", "cache for 10 minutes", "decision", ["perf", "ops"]),
    ("note", "beta", "rollback guide", "note", []),
    ("embed", 0, [0.25, -0.5, 0.125, 1.0]),
    ("link", 1, 0, "refines"),
    ("irrelevant", 0, "unrelated query"),
    ("forget_fact", 0, "obsolete"),
    ("task", "beta", "alpha", "Fix CI", "red since Monday"),
    ("update", 0, "doing", "on it"),
    ("send", "beta", "alpha", "which port?", None),
    ("send", "alpha", "beta", "8765", 0),
    ("read", "alpha"),
    ("fact", "beta", "to be purged", None, 0, None),
    ("purge", "f", 1),
]
COUNT = (
    "SELECT (SELECT count(*) FROM facts) + (SELECT count(*) FROM notes) + (SELECT count(*) FROM edges)"
    " + (SELECT count(*) FROM tasks) + (SELECT count(*) FROM messages) + (SELECT count(*) FROM purge_log)"
)


@pytest.fixture
def exported(two: tuple[psycopg.Connection, psycopg.Connection]) -> list[str]:
    a, b = two
    _truncate(a)
    _truncate(b)
    apply(a, HISTORY)
    lines = list(transfer.export(a))
    a.commit()
    tables = {json.loads(x)["table"] for x in lines[1:-1]}
    assert tables >= {"facts", "notes", "edges", "irrelevant", "forget_log", "tasks", "task_events"}
    assert tables >= {"messages", "purge_log"}
    return lines


def _replace(lines: list[str], table: str, column: str, value: object) -> tuple[list[str], int]:
    """The export with `column` of the first row of `table` set to `value`; and that line's number."""
    out = list(lines)
    for i, line in enumerate(out):
        obj = json.loads(line)
        if obj.get("table") == table and column in obj["row"]:
            obj["row"][column] = value
            out[i] = json.dumps(obj, ensure_ascii=False)
            return out, i + 1
    raise AssertionError(f"no {table}.{column} in the export")


def _refused(b: psycopg.Connection, lines: list[str]) -> InvalidInput:
    with pytest.raises(InvalidInput) as refused:
        transfer.load(b, lines)
    b.rollback()
    assert b.execute(COUNT).fetchone() == (0,), "something was written"
    return refused.value


@pytest.mark.parametrize(
    "table, column, value, says",
    [
        ("facts", "lineage", [1, 2], "facts.lineage must be an integer, not a list"),
        ("facts", "version_id", "7", "facts.version_id must be an integer, not a string"),
        ("facts", "lineage", True, "must be an integer, not a boolean"),
        ("facts", "lineage", 1.5, "must be an integer, not a number with a fraction"),
        ("facts", "lineage", 2**70, "out of range"),
        ("facts", "lineage", None, "facts.lineage must not be null"),
        ("facts", "statement", {"a": 1}, "facts.statement must be a string, not an object"),
        ("facts", "statement", 12, "must be a string, not an integer"),
        ("facts", "statement", "nul \x00 inside", "NUL"),
        ("facts", "statement", "lone \ud800 surrogate", "surrogate"),
        ("facts", "valid_from", "next tuesday", "facts.valid_from must be a timestamp"),
        ("facts", "valid_from", "2026-01-01T00:00:00", "with a time zone"),
        ("facts", "valid_from", 1700000000, "must be a timestamp (a string), not an integer"),
        ("notes", "tags", "ops", "notes.tags must be a list of strings, not a string"),
        ("notes", "tags", ["ops", 3], "notes.tags must be a list of strings"),
        ("notes", "embedding", [0.25, 0.5], "notes.embedding must be a vector (a string such as"),
        ("messages", "id", {"n": 1}, "messages.id must be an integer, not an object"),
        ("messages", "reply_to", "1", "messages.reply_to must be an integer"),
        ("edges", "from_note", [], "edges.from_note must be an integer, not a list"),
        ("purge_log", "erased", 2**40, "purge_log.erased"),
        ("edges", "id", 0, "edges.id must be an id (1 or more)"),
        ("facts", "lineage", -3, "facts.lineage must be an id"),
    ],
)
def test_a_wrong_type_names_its_line_and_column_and_writes_nothing(
    two: tuple[psycopg.Connection, psycopg.Connection],
    exported: list[str],
    table: str,
    column: str,
    value: object,
    says: str,
) -> None:
    lines, number = _replace(exported, table, column, value)
    error = _refused(two[1], lines)
    assert error.message.startswith(f"Line {number} of the export:"), error.message
    assert says in error.message and "nothing was imported" in error.message
    assert len(error.message) < 300


@pytest.mark.parametrize(
    "damage, says",
    [
        (lambda row: row.pop("lineage"), "facts row has no lineage"),
        (lambda row: row.pop("version_id"), "facts row has no version_id"),
    ],
)
def test_a_missing_key_column_is_refused(
    two: tuple[psycopg.Connection, psycopg.Connection],
    exported: list[str],
    damage: Callable[[dict[str, Any]], object],
    says: str,
) -> None:
    obj = json.loads(exported[1])
    assert obj["table"] == "facts"
    damage(obj["row"])
    error = _refused(two[1], [exported[0], json.dumps(obj), *exported[2:]])
    assert error.message.startswith("Line 2 of the export:") and says in error.message


@pytest.mark.parametrize(
    "line, says",
    [
        ('{"table": ["facts"], "row": {}}', "unknown line"),
        ('{"table": {"t": 1}, "row": {}}', "unknown line"),
        ('{"table": "facts", "row": [1, 2]}', "unknown line"),
        ("[1, 2, 3]", "not a JSON object"),
        ('"just a string"', "not a JSON object"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("{" * 100_000, "not JSON"),
        ('{"end": true, "rows": true}', "counts"),
    ],
)
def test_lines_of_the_wrong_shape(
    two: tuple[psycopg.Connection, psycopg.Connection], exported: list[str], line: str, says: str
) -> None:
    error = _refused(two[1], [exported[0], line, *exported[1:]])
    assert error.message.startswith("Line 2 of the export:") and says in error.message


def test_a_header_that_is_true_is_not_a_header(two: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    error = _refused(two[1], ['{"lore_export": true}', '{"end": true, "rows": 0}'])
    assert "no lore export header" in error.message


def test_a_huge_line_is_refused_without_reading_it_whole(exported: list[str]) -> None:
    huge = '{"table": "facts", "row": {"statement": "' + "x" * (transfer.MAX_LINE + 10) + '"}}\n'
    handle = io.StringIO(exported[0] + "\n" + huge + "\n".join(exported[1:]) + "\n")
    with pytest.raises(InvalidInput, match=r"^Line 2 of the export: longer than"):
        transfer.parse(transfer.lines_of(handle))
    assert handle.tell() <= len(exported[0]) + 1 + transfer.MAX_LINE + 1


# --- a property test: any value in any column ------------------------------------------------------

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
    st.sampled_from(["\ud800", "a\x00b", "2026-13-45T99:99:99+00:00", "[1,2", "[0.1,0.2,0.3,0.4]", ""]),
    st.lists(st.one_of(st.integers(), st.text(max_size=5), st.none()), max_size=4),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(line=st.integers(min_value=1, max_value=10_000), pick=st.integers(min_value=0), value=VALUES)
def test_any_value_in_any_column_imports_or_is_refused_whole(
    two: tuple[psycopg.Connection, psycopg.Connection],
    exported: list[str],
    line: int,
    pick: int,
    value: object,
) -> None:
    _, b = two
    _truncate(b)
    index = 1 + line % (len(exported) - 2)
    obj = json.loads(exported[index])
    columns = sorted(obj["row"])
    column = columns[pick % len(columns)]
    obj["row"][column] = value
    lines = [*exported[:index], json.dumps(obj, ensure_ascii=False), *exported[index + 1 :]]
    try:
        transfer.load(b, lines)
    except InvalidInput as refused:
        b.rollback()
        # the damaged line itself, or (a value of the right type that breaks a rule of the schema, such
        # as an edge now joining two spaces) the line where PostgreSQL refused it
        assert refused.message.startswith(f"Line {index + 1} of the export:") or re.match(
            r"The import failed \(line \d+\): ", refused.message
        ), refused.message
        assert "nothing was imported" in refused.message and len(refused.message) < 400
        assert b.execute(COUNT).fetchone() == (0,)
    else:
        b.commit()
    _truncate(b)


def test_the_cli_says_which_line_and_prints_no_traceback(project: Project, conn: psycopg.Connection) -> None:
    assert project.lore("facts", "add", "acme deploys with make ship").returncode == 0
    done = project.lore("export")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    row = json.loads(lines[1])
    row["row"]["lineage"] = [1, 2]
    bad = project.dir / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    conn.execute("DELETE FROM facts")
    conn.commit()
    failed = project.lore("import", str(bad))
    assert failed.returncode == 1
    assert "Traceback" not in failed.stderr and "Line 2 of the export" in failed.stderr, failed.stderr
    assert "facts.lineage must be an integer, not a list" in failed.stderr
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)
