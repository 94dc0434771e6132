"""`lore import`: an export loaded into this database in one transaction (all or nothing). Every id
that is free in the target is kept; an item already present with the same content is skipped; an
item whose id is taken by something else gets a new id, and references to it follow."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import sql
from psycopg.types.json import Jsonb

from lore.core.errors import InvalidInput
from lore.store.transfer.reading import Line, bad, parse
from lore.store.transfer.tables import SEQUENCED, TABLES, VOLATILE, columns, content
from lore.store.transfer.values import check_row, column_types

IMPORT_LOCK = 0x10BE_0009
# As migration 0013 did: the workspace its note was first written from, marked as guessed.
_GUESS_ROOTS = """
UPDATE markdown_sections m SET root_guessed = true, root = coalesce((
    SELECT n.workspace FROM notes n WHERE n.lineage = m.lineage ORDER BY n.recorded_at, n.version_id LIMIT 1
), '')
WHERE m.root = ''
"""


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
        self.types = column_types(conn)
        self.facts: dict[int, int] = {}
        self.notes: dict[int, int] = {}
        self.messages: dict[int, int] = {}
        self._roots: dict[int, int] = {}  # a thread's id in the file -> its root here, when not in the file

    def run(self, data: dict[str, list[Line]]) -> None:
        for table, lines in data.items():
            for line in lines:
                unknown = set(line.row) - set(self.cols[table])
                if unknown:
                    raise bad(line.number, f"{table} has no column {sorted(unknown)[0]!r}", "upgrade lore")
                check_row(line, table, self.types[table])
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

    def _handoffs(self, lines: Sequence[Line]) -> None:
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
    def _lineages(self, table: str, lines: Sequence[Line], sequence: str) -> dict[int, int]:
        groups: dict[int, list[Line]] = defaultdict(list)
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
                have = {content(r, self.cols[table]) for r in there}
                twin = lineage if all(content(x.row, self.cols[table]) in have for x in group) else None
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

    def _twin(self, table: str, group: Sequence[Line]) -> int | None:
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
            have = {content({**r[0], "lineage": None}, self.cols[table]) for r in rows}
            if all(content({**x.row, "lineage": None}, self.cols[table]) in have for x in group):
                return int(candidate)
        return None

    def _tasks(self, lines: Sequence[Line]) -> set[int]:
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

    def _messages(self, lines: Sequence[Line]) -> None:
        ids = [int(x.row["id"]) for x in lines]
        free = self._free("messages", "id", ids)
        taken = {
            int(r[0]): r[1]
            for r in self.conn.execute("SELECT id, to_jsonb(m) FROM messages m WHERE id = ANY(%s)", (ids,))
        }
        for line in sorted(lines, key=lambda x: int(x.row["id"])):
            self.line = line.number
            old = int(line.row["id"])
            if old in taken and content(taken[old], self.cols["messages"]) == content(
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
        lines: Sequence[Line],
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
        cols = [c for c in self.cols[table] if c not in VOLATILE and c in row]
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

    def _bump_sequences(self, data: dict[str, list[Line]]) -> None:
        """Every sequence past the highest id in use or in the file: an id the database hands out (now
        for a renumbered item, or later) never collides with an id kept from the file."""
        for table, column in SEQUENCED:
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
