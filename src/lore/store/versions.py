"""Versioned rows: what facts and notes share. A lineage is one item; each change closes its current
version (`superseded_at`) and writes the next with the same lineage, so history keeps every
version and "current" is the row whose `superseded_at` is NULL (a partial unique index per table
allows one). Forgetting closes the current version without a successor and writes `forget_log`:
nothing is deleted (`lore purge` is the one way to erase).

Only the owner space may change an item; a space that reads it (`reads_from`) may not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import class_row

from lore.core import secrets
from lore.core.errors import Conflict, NotFound, Refused
from lore.core.rows import Version
from lore.core.session import Origin

R = TypeVar("R", bound=Version)  # a Fact or a Note


@dataclass(frozen=True)
class Versioned(Generic[R]):
    table: str  # "facts" | "notes"
    item: str  # "fact" | "note": forget_log.item_kind, and how errors name it
    columns: str  # the row type's fields, in order
    row: type[R]
    public_id: Callable[[int], str]
    sequence: str  # numbers new lineages
    tool: str  # the tool that shows this kind of item (named in errors' hints)
    verb: str  # what a session does to change one ("revise", "edit")

    @property
    def find_hint(self) -> str:
        return f"Call {self.tool} to see the {self.item} ids."

    @property
    def current_hint(self) -> str:
        return f"Call {self.tool} to see its current version, then {self.verb} again if still needed."

    def _select(self, where: str) -> sql.Composed:
        return sql.SQL("SELECT {} FROM {} WHERE " + where).format(
            sql.SQL(self.columns), sql.Identifier(self.table)
        )

    def insert(
        self,
        conn: psycopg.Connection,
        origin: Origin,
        fields: Mapping[str, object],
        *,
        lineage: int | None = None,
        space: str | None = None,
        recorded_at: datetime | None = None,
    ) -> R:
        """Write a version, attributed to `origin`: the first of a new lineage (`lineage` None), or
        the next of `lineage`, recorded at `recorded_at` (what `close` returned for its predecessor).
        A field left out takes the column's default."""
        values: dict[str, object] = {"space": space or origin.space, **fields}
        values |= {"source": origin.source, "workspace": origin.workspace, "client_name": origin.client_name}
        if recorded_at is not None:
            values["recorded_at"] = recorded_at
        number = (
            sql.SQL("nextval({})").format(sql.Literal(self.sequence))
            if lineage is None
            else sql.Literal(lineage)
        )
        statement = sql.SQL("INSERT INTO {} (lineage, {}) VALUES ({}, {}) RETURNING {}").format(
            sql.Identifier(self.table),
            sql.SQL(", ").join(map(sql.Identifier, values)),
            number,
            sql.SQL(", ").join(sql.Placeholder() * len(values)),
            sql.SQL(self.columns),
        )
        with conn.cursor(row_factory=class_row(self.row)) as cur:
            cur.execute(statement, list(values.values()))
            row = cur.fetchone()
        assert row is not None
        return row

    def lock_current(
        self, conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int, action: str
    ) -> R:
        """The current version of `lineage`, locked (FOR UPDATE) until the transaction ends, if this
        session may change it; else the reason: gone, changed at the same moment, or read-only."""
        with conn.cursor(row_factory=class_row(self.row)) as cur:
            cur.execute(
                self._select("lineage = %s AND superseded_at IS NULL AND space = ANY(%s) FOR UPDATE"),
                (lineage, list(readable)),
            )
            old = cur.fetchone()
        if old is None:
            self._raise_missing(conn, lineage, readable)
        assert old is not None
        if old.space != origin.space:
            raise Refused(
                f"{self.public_id(lineage)} belongs to space {old.space!r}, which this session may read "
                "but not change.",
                f"{action} from a workspace of {old.space!r}, or remember a new {self.item} here.",
            )
        return old

    def close(self, conn: psycopg.Connection, old: R) -> datetime:
        """End belief in `old` now (never before it was recorded); returns that instant, which is
        also when a successor version is recorded."""
        row = conn.execute(
            sql.SQL(
                "UPDATE {} SET superseded_at = greatest(clock_timestamp(), recorded_at) "
                "WHERE version_id = %s RETURNING superseded_at"
            ).format(sql.Identifier(self.table)),
            (old.version_id,),
        ).fetchone()
        assert row is not None
        return row[0]  # type: ignore[no-any-return]

    def next(self, conn: psycopg.Connection, origin: Origin, old: R, fields: Mapping[str, object]) -> R:
        """Close `old` (locked: lock_current) and write its successor, `fields`, recorded at that instant."""
        stamp = self.close(conn, old)
        return self.insert(conn, origin, fields, lineage=old.lineage, space=old.space, recorded_at=stamp)

    def restore(
        self,
        conn: psycopg.Connection,
        origin: Origin,
        readable: Sequence[str],
        lineage: int,
        fields: Callable[[R], Mapping[str, object]],
    ) -> R:
        """Believe a forgotten item again: its last version (`fields` of it) written anew as the
        current one. The forget_log row stays: the history shows both acts."""
        name = self.public_id(lineage)
        with conn.transaction():
            versions = self.history(conn, readable, lineage)
            if not versions:
                raise NotFound(f"No {self.item} {name} in this session's spaces.", self.find_hint)
            last = versions[-1]
            if last.superseded_at is None:
                return last  # believed already
            if last.space != origin.space:
                raise Refused(
                    f"{name} belongs to space {last.space!r}, which this session may read but not change.",
                    f"Restore it from a workspace of {last.space!r}.",
                )
            return self.insert(conn, origin, fields(last), lineage=lineage, space=last.space)

    def forget(
        self, conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int, reason: str
    ) -> R:
        """Close the current version and record who forgot it and why. The rows stay."""
        secrets.refuse(("reason", reason), what="reason")
        with conn.transaction():
            old = self.lock_current(conn, origin, readable, lineage, "Forget it")
            self.close(conn, old)
            conn.execute(
                "INSERT INTO forget_log (space, item_kind, lineage, reason, source, workspace, client_name) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (old.space, self.item, lineage, reason, origin.source, origin.workspace, origin.client_name),
            )
        return old

    def current(
        self, conn: psycopg.Connection, spaces: Sequence[str], lineages: Sequence[int]
    ) -> dict[int, R]:
        """The current versions of several items that `spaces` can read, by lineage."""
        with conn.cursor(row_factory=class_row(self.row)) as cur:
            cur.execute(
                self._select("lineage = ANY(%s) AND superseded_at IS NULL AND space = ANY(%s)"),
                (list(lineages), list(spaces)),
            )
            return {row.lineage: row for row in cur.fetchall()}

    def history(self, conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> list[R]:
        """Every version of one item, oldest first (empty when not visible from `spaces`)."""
        with conn.cursor(row_factory=class_row(self.row)) as cur:
            cur.execute(
                self._select("lineage = %s AND space = ANY(%s) ORDER BY recorded_at, version_id"),
                (lineage, list(spaces)),
            )
            return cur.fetchall()

    def histories(
        self, conn: psycopg.Connection, spaces: Sequence[str], lineages: Sequence[int]
    ) -> dict[int, list[R]]:
        """Every version of several items, oldest first, by lineage, in one query."""
        with conn.cursor(row_factory=class_row(self.row)) as cur:
            cur.execute(
                self._select(
                    "lineage = ANY(%s) AND space = ANY(%s) ORDER BY lineage, recorded_at, version_id"
                ),
                (list(lineages), list(spaces)),
            )
            found: dict[int, list[R]] = {lineage: [] for lineage in lineages}
            for row in cur.fetchall():
                found.setdefault(row.lineage, []).append(row)
            return found

    def _raise_missing(self, conn: psycopg.Connection, lineage: int, readable: Sequence[str]) -> None:
        row = conn.execute(
            sql.SQL(
                "SELECT bool_or(superseded_at IS NULL) FROM {} WHERE lineage = %s AND space = ANY(%s)"
            ).format(sql.Identifier(self.table)),
            (lineage, list(readable)),
        ).fetchone()
        name = self.public_id(lineage)
        if row and row[0] is True:  # there is a current version: another session holds or just changed it
            raise Conflict(f"{name} was changed by another session at the same moment.", self.current_hint)
        if row and row[0] is False:
            raise NotFound(f"{name} was forgotten or replaced.", self.find_hint)
        raise NotFound(f"No {self.item} {name} in this session's spaces.", self.find_hint)
