"""MCP session state kept in the database, for a stateless `lore serve` whose sessions any replica
may serve (lore.core.session_ids; lore.mcp.sessions says when a session's space changed)."""

from __future__ import annotations

import random

from lore.service.runtime import Runtime
from lore.store import mcp_sessions

EXPIRE_ONE_IN = 100  # a new session deletes the stale ones now and then, not on every call


def swap_space(rt: Runtime, key: str, space: str) -> str | None:
    """Record `space` as session `key`'s last space; the one before (None: first seen anywhere)."""
    previous = rt.transact(lambda conn: mcp_sessions.swap_space(conn, key, space))
    if previous is None and random.randrange(EXPIRE_ONE_IN) == 0:
        rt.transact(mcp_sessions.expire)
    return previous
