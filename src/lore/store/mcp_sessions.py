"""The space each MCP session of a stateless `lore serve` was last given (migration 0016): the
state that must not depend on which replica answered (lore.mcp.sessions says when it changed)."""

from __future__ import annotations

import psycopg

# The space recorded before (NULL: the session is new), and the new one written, in one statement:
# the update keeps the old value in `previous` and returns it.
_SWAP = """
INSERT INTO mcp_sessions AS s (key, space) VALUES (%(key)s, %(space)s)
ON CONFLICT (key) DO UPDATE SET previous = s.space, space = excluded.space, seen_at = now()
RETURNING previous
"""
_EXPIRE = "DELETE FROM mcp_sessions WHERE seen_at < now() - make_interval(days => %(days)s)"
KEEP_DAYS = 30


def swap_space(conn: psycopg.Connection, key: str, space: str) -> str | None:
    """Record `space` as session `key`'s; the one recorded before (None: none)."""
    row = conn.execute(_SWAP, {"key": key, "space": space}).fetchone()
    return str(row[0]) if row and row[0] is not None else None


def expire(conn: psycopg.Connection, days: int = KEEP_DAYS) -> int:
    """Delete the sessions unseen for `days`; how many went."""
    with conn.transaction():
        return conn.execute(_EXPIRE, {"days": days}).rowcount
