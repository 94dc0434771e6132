"""The space each session of a stateless server was last given (lore.store.mcp_sessions)."""

from __future__ import annotations

import psycopg

from lore.store import mcp_sessions


def test_a_swap_answers_the_space_recorded_before(conn: psycopg.Connection) -> None:
    conn.autocommit = True
    assert mcp_sessions.swap_space(conn, "alice|s1", "alice/work") is None  # first seen
    assert mcp_sessions.swap_space(conn, "alice|s1", "alice/work") == "alice/work"
    assert mcp_sessions.swap_space(conn, "alice|s1", "alice/job") == "alice/work"
    assert mcp_sessions.swap_space(conn, "alice|s1", "alice/job") == "alice/job"
    assert mcp_sessions.swap_space(conn, "bob|s1", "bob/work") is None  # another user's session


def test_sessions_unseen_for_30_days_expire(conn: psycopg.Connection) -> None:
    conn.autocommit = True
    mcp_sessions.swap_space(conn, "old", "a")
    mcp_sessions.swap_space(conn, "new", "a")
    conn.execute("UPDATE mcp_sessions SET seen_at = now() - interval '31 days' WHERE key = 'old'")
    assert mcp_sessions.expire(conn) == 1
    assert conn.execute("SELECT key FROM mcp_sessions").fetchall() == [("new",)]
