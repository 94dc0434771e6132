"""The agent events' database on a psycopg connection (lore.db.calls.Port): the same SQL
functions the local hooks call through psql, the same statement. Each call runs in a savepoint, so a
call that fails (a record that cannot be written) leaves the caller's transaction usable."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from lore.db.calls import Function


class ConnPort:
    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn

    def call(self, function: Function, *args: Any) -> Any:
        placeholders = ", ".join(f"%s::{t}" for t in function.types)
        values = [
            Jsonb(a) if t in ("jsonb", "json") and a is not None else a
            for a, t in zip(args, function.types, strict=True)
        ]
        with self._conn.transaction():
            row = self._conn.execute(f"SELECT to_json({function.name}({placeholders}))", values).fetchone()
        return None if row is None else row[0]
