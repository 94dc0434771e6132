"""A handoff written as the session end writes it (lore.service.events.session_end, here through
psycopg), for tests that need one in the database."""

from __future__ import annotations

import psycopg

from lore.core import capture
from lore.core.rows import Handoff
from lore.service.events import session_end
from lore.store.port import ConnPort


def record(conn: psycopg.Connection, handoff: capture.Handoff) -> Handoff:
    """Write (or update) `handoff`; committed."""
    return session_end.store(ConnPort(conn), handoff.payload())
