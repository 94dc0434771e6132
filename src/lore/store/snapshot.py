"""The session-start snapshot through psycopg: the same SQL function the hooks call through psql
(`lore_session_snapshot`, migration 0012), parsed by lore.core.session_start."""

from __future__ import annotations

import psycopg

from lore.core.session_start import Request, Snapshot, parse


def read(conn: psycopg.Connection, wanted: Request) -> Snapshot:
    row = conn.execute(
        "SELECT lore_session_snapshot(%s::text[], %s, %s, %s, %s, %s, %s, %s::text[], %s)", wanted.arguments()
    ).fetchone()
    assert row is not None
    return parse(row[0])
