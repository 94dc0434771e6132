"""`lore export` / `lore import`: the whole memory as JSON Lines, lossless between two databases.

Format (one JSON object per line):

    {"lore_export": 1, "schema": 5, "exported_at": "…", "space": null}       header
    {"table": "facts", "row": {"version_id": 1, "lineage": 1, …}}           one line per row
    …
    {"end": true, "rows": 123, "counts": {"facts": 10, …}}                 trailer

Rows are every column but generated ones (notes.tsv), as PostgreSQL's own JSON of the row: timestamps
with microseconds and offset, vectors as pgvector text, so that the round trip is exact. Tables, in
dependency order: every version of facts and notes (history), edges, forget_log, irrelevant, tasks,
task_events, messages, purge_log, markdown_sections, handoffs. Accounts (users, tokens, OAuth) are
not memory and are never exported. A file without its trailer (cut short) is refused.

Import checks every line before the first insert: its shape, its length (MAX_LINE), and every value
against the type of its column in the target (an id that is a list, a NUL byte, a lone surrogate, a
timestamp without a zone): a damaged file is refused with the number of its line, never a traceback.
Import runs in one transaction (all or nothing) and keeps every id that is free in the target, so an
import into an empty database reproduces the source exactly. An item already present with the same
content (the same file imported twice, or a subset of what is there) is skipped; an item whose id is
taken by something else gets a new id, and references to it (edges, tasks, replies, forget log) follow.
Secrets are not scanned on import: the rows were accepted once (possibly with --allow-secret).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from lore.core.errors import InvalidInput
from lore.db import migrate

FORMAT = 1
IMPORT_LOCK = 0x10BE_0009
# The longest line an import reads (characters). A row of lore's is far shorter: a 32 KiB note body,
# even with every character escaped, plus a 1,536-dimension embedding stays under 300 KB.
MAX_LINE = 4 * 1024 * 1024
TABLES = (
    "facts",
    "notes",
    "edges",
    "forget_log",
    "irrelevant",
    "tasks",
    "task_events",
    "messages",
    "purge_log",
    "markdown_sections",
    "handoffs",
)

# Which rows belong to `--space S`, or to a signed-in user's spaces (a message belongs to both its
# sender's and its target's space).
_SPACE_FILTER = {
    "facts": "space = ANY(%(spaces)s)",
    "notes": "space = ANY(%(spaces)s)",
    "edges": "space = ANY(%(spaces)s)",
    "forget_log": "space = ANY(%(spaces)s)",
    "irrelevant": "space = ANY(%(spaces)s)",
    "tasks": "space = ANY(%(spaces)s)",
    "task_events": "lineage IN (SELECT lineage FROM tasks WHERE space = ANY(%(spaces)s))",
    "messages": "to_space = ANY(%(spaces)s) OR from_space = ANY(%(spaces)s)",
    "purge_log": "space = ANY(%(spaces)s)",
    "markdown_sections": "space = ANY(%(spaces)s)",
    "handoffs": "space = ANY(%(spaces)s)",
}
_ORDER = {
    "facts": "lineage, version_id",
    "notes": "lineage, version_id",
    "tasks": "lineage",
    "markdown_sections": "space, root, file, section",
    "handoffs": "id",
}
# Columns that may legitimately differ between two copies of the same item (filled in later).
_VOLATILE = {"version_id", "id", "embedding", "embedding_model"}


@dataclass
class Report:
    inserted: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    skipped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    renumbered: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def describe(self) -> str:
        def fmt(counts: dict[str, int]) -> str:
            return ", ".join(f"{n} {t}" for t, n in counts.items() if n) or "none"

        return (
            f"imported: {fmt(self.inserted)}; already present (skipped): {fmt(self.skipped)}; "
            f"given new ids: {fmt(self.renumbered)}"
        )


def columns(conn: psycopg.Connection, table: str) -> list[str]:
    """The table's stored columns in order (generated ones such as notes.tsv left out)."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def export(
    conn: psycopg.Connection, space: str | None = None, *, spaces: Sequence[str] | None = None
) -> Iterator[str]:
    """The lines of an export (without newlines), streamed: header, rows, trailer. `space`: that
    space's rows; `spaces`: those spaces' (a signed-in user's own); neither: the whole database."""
    chosen = [space] if space is not None else (list(spaces) if spaces is not None else None)
    version = migrate.current_version(conn)
    conn.execute("SET TIME ZONE 'UTC'")  # timestamps in one form on both sides of the round trip
    yield _dumps(
        {
            "lore_export": FORMAT,
            "schema": version,
            "exported_at": datetime.now(UTC).isoformat(),
            "space": space,
        }
        | ({"spaces": chosen} if space is None and chosen is not None else {})
    )
    counts: dict[str, int] = {}
    for table in TABLES:
        cols = columns(conn, table)
        where = sql.SQL(_SPACE_FILTER[table]) if chosen is not None else sql.SQL("true")
        order = _ORDER.get(table, cols[0])
        query = sql.SQL("SELECT to_jsonb(t) FROM {} AS t WHERE {} ORDER BY {}").format(
            sql.Identifier(table), where, sql.SQL(order)
        )
        counts[table] = 0
        with conn.cursor(name=f"lore_export_{table}") as cur:
            cur.itersize = 500
            cur.execute(query, {"spaces": chosen})
            for (row,) in cur:
                counts[table] += 1
                yield _dumps({"table": table, "row": {c: row.get(c) for c in cols}})
    yield _dumps({"end": True, "rows": sum(counts.values()), "counts": counts})


def _dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


# --- import ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Line:
    number: int
    row: dict[str, Any]


def lines_of(handle: TextIO) -> Iterator[str]:
    """The lines of an export file, each read with a bound: a line longer than MAX_LINE is refused at
    its number, never read whole into memory."""
    number = 0
    while line := handle.readline(MAX_LINE + 1):
        number += 1
        if len(line) > MAX_LINE:
            raise _too_long(number)
        yield line


def _too_long(number: int) -> InvalidInput:
    return _bad(number, f"longer than {MAX_LINE:,} characters", "use a file written by `lore export`")


def parse(lines: Iterable[str]) -> dict[str, list[_Line]]:
    """Check the whole file before anything is written: header, known tables, objects, trailer.
    (The values of each row are checked against the target's columns by the importer, also before
    anything is written.)"""
    by_table: dict[str, list[_Line]] = {t: [] for t in TABLES}
    header_seen = trailer = False
    count = 0
    for number, raw in enumerate(lines, 1):
        if len(raw) > MAX_LINE:
            raise _too_long(number)
        text = raw.strip()
        if not text:
            continue
        if trailer:
            raise _bad(number, "there is data after the end line", "use the file exactly as exported")
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _bad(number, f"not JSON ({exc.msg})", "use a file written by `lore export`") from None
        except RecursionError:
            raise _bad(number, "JSON nested too deeply", "use a file written by `lore export`") from None
        if not isinstance(obj, dict):
            raise _bad(number, "not a JSON object", "use a file written by `lore export`")
        if not header_seen:
            if not _is_int(obj.get("lore_export")) or obj.get("lore_export") != FORMAT:
                raise _bad(number, "no lore export header", "use a file written by `lore export`")
            header_seen = True
            continue
        if obj.get("end") is True:
            trailer = True
            if not _is_int(obj.get("rows")) or obj.get("rows") != count:
                raise _bad(
                    number,
                    f"the end line counts {obj.get('rows')} rows but the file has {count}",
                    "the file was edited or damaged; export it again",
                )
            continue
        table, row = obj.get("table"), obj.get("row")
        if not isinstance(table, str) or table not in by_table or not isinstance(row, dict):
            raise _bad(number, f"unknown line {text[:60]!r}", "use a file written by `lore export`")
        by_table[table].append(_Line(number, row))
        count += 1
    if not header_seen:
        raise InvalidInput("The file is empty.", "Use a file written by `lore export`.")
    if not trailer:
        raise InvalidInput(
            "The export ends early: its end line is missing (cut short while copying or writing?).",
            "Export it again; nothing was imported.",
        )
    return by_table


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bad(number: int, what: str, hint: str) -> InvalidInput:
    return InvalidInput(
        f"Line {number} of the export: {what}; nothing was imported.", f"{hint.capitalize()}."
    )


def load(conn: psycopg.Connection, lines: Iterable[str]) -> Report:
    """Import an export into this database in one transaction; returns what happened."""
    data = parse(lines)
    report = Report()
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (IMPORT_LOCK,))
        conn.execute("SET LOCAL TIME ZONE 'UTC'")
        importer = _Importer(conn, report)
        try:
            importer.run(data)
        except psycopg.Error as exc:
            where = f" (line {importer.line})" if importer.line else ""
            raise InvalidInput(
                f"The import failed{where}: {str(exc).strip().splitlines()[0]}; nothing was imported.",
                "Check that the file comes from `lore export` of a compatible lore version.",
            ) from None
    return report


class _Importer:
    def __init__(self, conn: psycopg.Connection, report: Report) -> None:
        self.conn = conn
        self.report = report
        self.line = 0
        self.cols = {t: columns(conn, t) for t in TABLES}
        self.types = _column_types(conn)
        self.facts: dict[int, int] = {}
        self.notes: dict[int, int] = {}
        self.messages: dict[int, int] = {}
        self._roots: dict[int, int] = {}  # a thread's id in the file -> its root here, when not in the file

    def run(self, data: dict[str, list[_Line]]) -> None:
        for table, lines in data.items():
            for line in lines:
                unknown = set(line.row) - set(self.cols[table])
                if unknown:
                    raise _bad(line.number, f"{table} has no column {sorted(unknown)[0]!r}", "upgrade lore")
                _check_row(line, table, self.types[table])
        self._bump_sequences(data)  # new ids (for renumbered items) never collide with kept ones
        self.facts = self._lineages("facts", data["facts"], "fact_lineage_seq")
        self.notes = self._lineages("notes", data["notes"], "note_lineage_seq")
        self._rows("edges", data["edges"], {"from_note": self.notes, "to_note": self.notes}, conflict=True)
        self._rows("forget_log", data["forget_log"], {"lineage": None})
        self._rows("irrelevant", data["irrelevant"], {"note": self.notes})
        added = self._tasks(data["tasks"])
        events = [x for x in data["task_events"] if self.notes.get(x.row["lineage"]) in added]
        self._rows("task_events", events, {"lineage": self.notes}, dedupe=False)
        self._messages(data["messages"])
        self._rows("purge_log", data["purge_log"], {})
        self._rows("markdown_sections", data["markdown_sections"], {"lineage": self.notes}, conflict=True)
        self.conn.execute(_GUESS_ROOTS)  # an export from before migration 0013 has no roots
        self._handoffs(data["handoffs"])

    def _handoffs(self, lines: Sequence[_Line]) -> None:
        """One per (space, client, session): one already there is kept (ON CONFLICT). Its note and the
        tasks it touched are note lineages, remapped like every other reference."""
        free = self._free("handoffs", "id", [int(x.row["id"]) for x in lines if x.row.get("id") is not None])
        for line in lines:
            self.line = line.number
            row = dict(line.row)
            if row.get("note") is not None:
                row["note"] = self.notes.get(int(row["note"]), int(row["note"]))
            row["tasks"] = [self.notes.get(int(t), int(t)) for t in row.get("tasks") or []]
            keep = "id" if row.get("id") is not None and int(row["id"]) in free else None
            if self._insert("handoffs", row, keep_id=keep, conflict=True):
                self.report.inserted["handoffs"] += 1
            else:
                self.report.skipped["handoffs"] += 1

    # facts and notes: every version of a lineage moves together
    def _lineages(self, table: str, lines: Sequence[_Line], sequence: str) -> dict[int, int]:
        groups: dict[int, list[_Line]] = defaultdict(list)
        for line in lines:
            groups[int(line.row["lineage"])].append(line)
        if not groups:
            return {}
        existing: dict[int, list[dict[str, Any]]] = defaultdict(list)
        query = sql.SQL("SELECT lineage, to_jsonb(t) FROM {} AS t WHERE lineage = ANY(%s)").format(
            sql.Identifier(table)
        )
        for lineage, row in self.conn.execute(query, (list(groups),)):
            existing[int(lineage)].append(row)
        free_versions = self._free(table, "version_id", [int(x.row["version_id"]) for x in lines])
        mapping: dict[int, int] = {}
        for lineage, group in groups.items():
            there = existing.get(lineage)
            if there is not None:
                have = {_content(r, self.cols[table]) for r in there}
                twin = lineage if all(_content(x.row, self.cols[table]) in have for x in group) else None
                twin = twin if twin is not None else self._twin(table, group)
                if twin is not None:  # imported before (under this id or, renumbered, another)
                    mapping[lineage] = twin
                    self.report.skipped[table] += 1
                    continue
                row = self.conn.execute(
                    sql.SQL("SELECT nextval({})").format(sql.Literal(sequence))
                ).fetchone()
                assert row is not None
                mapping[lineage] = int(row[0])
                self.report.renumbered[table] += 1
            else:
                mapping[lineage] = lineage
            # Versions keep their ids only all together, so that their order within the lineage stays.
            keep = all(int(x.row["version_id"]) in free_versions for x in group)
            for line in sorted(group, key=lambda x: int(x.row["version_id"])):
                self.line = line.number
                self._insert(
                    table, {**line.row, "lineage": mapping[lineage]}, keep_id="version_id" if keep else None
                )
            self.report.inserted[table] += 1
        return mapping

    def _twin(self, table: str, group: Sequence[_Line]) -> int | None:
        """A lineage of the target holding every version of `group` (same content, other id)."""
        first = group[0].row
        query = sql.SQL(
            "SELECT DISTINCT lineage FROM {} WHERE space = %s AND recorded_at = %s::timestamptz"
        ).format(sql.Identifier(table))
        for (candidate,) in self.conn.execute(query, (first["space"], first["recorded_at"])).fetchall():
            rows = self.conn.execute(
                sql.SQL("SELECT to_jsonb(t) FROM {} AS t WHERE lineage = %s").format(sql.Identifier(table)),
                (candidate,),
            ).fetchall()
            have = {_content({**r[0], "lineage": None}, self.cols[table]) for r in rows}
            if all(_content({**x.row, "lineage": None}, self.cols[table]) in have for x in group):
                return int(candidate)
        return None

    def _tasks(self, lines: Sequence[_Line]) -> set[int]:
        added: set[int] = set()
        for line in lines:
            self.line = line.number
            lineage = self.notes.get(int(line.row["lineage"]), int(line.row["lineage"]))
            row = {**line.row, "lineage": lineage}
            if self._insert("tasks", row, keep_id=None, conflict=True):
                added.add(lineage)
                self.report.inserted["tasks"] += 1
            else:
                self.report.skipped["tasks"] += 1
        return added

    def _messages(self, lines: Sequence[_Line]) -> None:
        ids = [int(x.row["id"]) for x in lines]
        free = self._free("messages", "id", ids)
        taken = {
            int(r[0]): r[1]
            for r in self.conn.execute("SELECT id, to_jsonb(m) FROM messages m WHERE id = ANY(%s)", (ids,))
        }
        for line in sorted(lines, key=lambda x: int(x.row["id"])):
            self.line = line.number
            old = int(line.row["id"])
            if old in taken and _content(taken[old], self.cols["messages"]) == _content(
                line.row, self.cols["messages"]
            ):
                self.messages[old] = old
                self.report.skipped["messages"] += 1
                continue
            twin = self.conn.execute(
                "SELECT id FROM messages WHERE sent_at = %s::timestamptz AND from_space = %s "
                "AND to_space = %s AND body = %s AND source = %s ORDER BY id LIMIT 1",
                (
                    line.row["sent_at"],
                    line.row["from_space"],
                    line.row["to_space"],
                    line.row["body"],
                    line.row["source"],
                ),
            ).fetchone()
            if twin is not None and old not in free:  # imported before under another id
                self.messages[old] = int(twin[0])
                self.report.skipped["messages"] += 1
                continue
            row = dict(line.row)
            parent = row.get("reply_to")
            if parent is not None:
                row["reply_to"] = self.messages.get(int(parent))
            new = self._insert("messages", row, keep_id="id" if old in free else None, returning="id")
            assert new is not None
            self.messages[old] = int(new)
            # A thread whose first message is not in the file (a space's export) goes on from its
            # first message that is, as purge re-roots a thread (lore.purge).
            root = int(line.row["thread"])
            thread = self.messages.get(root) or self._roots.setdefault(root, int(new))
            self.conn.execute("UPDATE messages SET thread = %s WHERE id = %s", (thread, new))
            if old not in free:
                self.report.renumbered["messages"] += 1
            self.report.inserted["messages"] += 1

    def _rows(
        self,
        table: str,
        lines: Sequence[_Line],
        refs: dict[str, dict[int, int] | None],
        *,
        conflict: bool = False,
        dedupe: bool = True,
    ) -> None:
        """Rows with a surrogate `id` (kept when free) and references to remap."""
        free = self._free(table, "id", [int(x.row["id"]) for x in lines if "id" in x.row])
        for line in lines:
            self.line = line.number
            row = dict(line.row)
            for column, mapping in refs.items():
                if mapping is None:  # forget_log.lineage: a fact or a note, by item_kind
                    mapping = self.facts if row.get("item_kind") == "fact" else self.notes
                value = int(row[column])
                row[column] = mapping.get(value, value)
            if dedupe and not conflict and self._present(table, row):
                self.report.skipped[table] += 1
                continue
            keep = "id" if "id" in row and int(row["id"]) in free else None
            if self._insert(table, row, keep_id=keep, conflict=conflict):
                self.report.inserted[table] += 1
            else:
                self.report.skipped[table] += 1

    def _present(self, table: str, row: dict[str, Any]) -> bool:
        cols = [c for c in self.cols[table] if c not in _VOLATILE and c in row]
        condition = sql.SQL(" AND ").join(
            sql.SQL("t.{c} IS NOT DISTINCT FROM r.{c}").format(c=sql.Identifier(c)) for c in cols
        )
        query = sql.SQL(
            "SELECT EXISTS (SELECT 1 FROM {t} AS t, jsonb_populate_record(NULL::{t}, %s) AS r WHERE {cond})"
        ).format(t=sql.Identifier(table), cond=condition)
        found = self.conn.execute(query, (Jsonb(row),)).fetchone()
        return bool(found and found[0])

    def _insert(
        self,
        table: str,
        row: dict[str, Any],
        *,
        keep_id: str | None,
        conflict: bool = False,
        returning: str | None = None,
    ) -> Any:
        """Insert one row from its JSON through PostgreSQL's own conversion (exact round trip)."""
        identity = {"version_id", "id"}
        cols = [c for c in self.cols[table] if c in row and (c not in identity or c == keep_id)]
        names = sql.SQL(", ").join(map(sql.Identifier, cols))
        query = sql.SQL(
            "INSERT INTO {t} ({names}) {override} SELECT {names} FROM jsonb_populate_record(NULL::{t}, %s)"
        ).format(
            t=sql.Identifier(table),
            names=names,
            override=sql.SQL("OVERRIDING SYSTEM VALUE") if keep_id else sql.SQL(""),
        )
        if conflict:
            query += sql.SQL(" ON CONFLICT DO NOTHING")
        query += sql.SQL(" RETURNING {}").format(sql.Identifier(returning or cols[0]))
        found = self.conn.execute(query, (Jsonb(row),)).fetchone()
        return found[0] if found else None

    def _free(self, table: str, column: str, ids: Sequence[int]) -> set[int]:
        if not ids:
            return set()
        query = sql.SQL("SELECT {c} FROM {t} WHERE {c} = ANY(%s)").format(
            c=sql.Identifier(column), t=sql.Identifier(table)
        )
        used = {int(r[0]) for r in self.conn.execute(query, (list(ids),))}
        return set(ids) - used

    def _bump_sequences(self, data: dict[str, list[_Line]]) -> None:
        """Every sequence past the highest id in use or in the file: an id the database hands out (now
        for a renumbered item, or later) never collides with an id kept from the file."""
        for table, column in (
            ("facts", "lineage"),
            ("notes", "lineage"),
            ("facts", "version_id"),
            ("notes", "version_id"),
            ("edges", "id"),
            ("forget_log", "id"),
            ("irrelevant", "id"),
            ("task_events", "id"),
            ("messages", "id"),
            ("purge_log", "id"),
            ("handoffs", "id"),
        ):
            if column == "lineage":
                seq = "fact_lineage_seq" if table == "facts" else "note_lineage_seq"
            else:
                found = self.conn.execute("SELECT pg_get_serial_sequence(%s, %s)", (table, column)).fetchone()
                assert found is not None and found[0]
                seq = str(found[0])
            found_top = self.conn.execute(
                sql.SQL("SELECT max({c}) FROM {t}").format(c=sql.Identifier(column), t=sql.Identifier(table))
            ).fetchone()
            in_file = [int(x.row[column]) for x in data.get(table, []) if x.row.get(column) is not None]
            candidates = [*in_file, *([int(found_top[0])] if found_top and found_top[0] is not None else [])]
            if not candidates:
                continue
            top = max(candidates)
            last = self.conn.execute("SELECT pg_sequence_last_value(%s::regclass)", (seq,)).fetchone()
            if last is None or last[0] is None or top > last[0]:
                self.conn.execute("SELECT setval(%s::regclass, %s)", (seq, top))


# --- the values of a row ----------------------------------------------------------------------------

# The columns the importer itself reads (ids it maps, keys it matches on): present and not null.
# As migration 0013 did: the workspace its note was first written from, marked as guessed.
_GUESS_ROOTS = """
UPDATE markdown_sections m SET root_guessed = true, root = coalesce((
    SELECT n.workspace FROM notes n WHERE n.lineage = m.lineage ORDER BY n.recorded_at, n.version_id LIMIT 1
), '')
WHERE m.root = ''
"""

_KEYS = {
    "facts": ("lineage", "version_id", "space", "recorded_at"),
    "notes": ("lineage", "version_id", "space", "recorded_at"),
    "edges": ("from_note", "to_note"),
    "forget_log": ("lineage", "item_kind"),
    "irrelevant": ("note",),
    "tasks": ("lineage",),
    "task_events": ("lineage",),
    "messages": ("id", "thread", "sent_at", "from_space", "to_space", "body", "source"),
    "purge_log": (),
    "markdown_sections": ("lineage",),
    "handoffs": ("space", "client", "session_id"),
}
_INT_RANGE = {"int2": 2**15, "int4": 2**31, "int8": 2**63}
_INT_ARRAYS = {"_int2", "_int4", "_int8"}
# Columns that hold ids (their own, or another row's): sequences hand out 1, 2, ...; 0 or less is damage.
_IDS = {"version_id", "lineage", "id", "from_note", "to_note", "note", "reply_to", "thread"}


@dataclass(frozen=True)
class _Column:
    udt: str  # information_schema's udt_name: int8, text, timestamptz, _text, vector, ...
    nullable: bool


def _column_types(conn: psycopg.Connection) -> dict[str, dict[str, _Column]]:
    rows = conn.execute(
        "SELECT table_name, column_name, udt_name, is_nullable = 'YES' FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = ANY(%s) AND is_generated = 'NEVER'",
        (list(TABLES),),
    ).fetchall()
    out: dict[str, dict[str, _Column]] = {t: {} for t in TABLES}
    for table, column, udt, nullable in rows:
        out[table][column] = _Column(udt, bool(nullable))
    return out


def _check_row(line: _Line, table: str, types: dict[str, _Column]) -> None:
    """Every value of one row has its column's type (checked before anything is written, so that a
    damaged file is refused with its line, never with a traceback or a driver's message)."""
    for key in _KEYS[table]:
        if key not in line.row:
            raise _bad(line.number, f"a {table} row has no {key}", "use a file written by `lore export`")
    for column, value in line.row.items():
        problem = _wrong(value, types[column], required=column in _KEYS[table], an_id=column in _IDS)
        if problem:
            raise _bad(line.number, f"{table}.{column} {problem}", "use a file written by `lore export`")


def _wrong(value: object, column: _Column, *, required: bool, an_id: bool) -> str | None:
    """What is wrong with `value` for `column` ("must be ..."), or None."""
    if value is None:
        return "must not be null" if required or not column.nullable else None
    udt = column.udt
    if udt in _INT_RANGE:
        if not _is_int(value):
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


def _content(row: dict[str, Any], cols: Sequence[str]) -> str:
    """What makes two copies of a row the same item (ids and embeddings aside), as a comparable key."""
    return json.dumps([row.get(c) for c in cols if c not in _VOLATILE], sort_keys=True)
