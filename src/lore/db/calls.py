"""What the agent events (lore.service.events) need from a database connection: one call of a SQL
function, its arguments typed, its one result as JSON. Two implementations: psql
(lore.db.psql.PsqlPort: the local hooks, no driver) and psycopg (lore.store.port.ConnPort: /api, the
CLI, a spool replayed). The functions the events call are named here once, each with its argument
types, so both connections build the same statement. Driver-free."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Function:
    """A SQL function and the types of its arguments, in order (`text[]`, `jsonb`, `integer`, ...)."""

    name: str
    types: tuple[str, ...]


class Port(Protocol):
    def call(self, function: Function, *args: Any) -> Any:
        """`SELECT to_json(function(args...))`, parsed: None for SQL NULL. Raises a LoreError
        (StoreError through psql, DatabaseError through psycopg) when the database fails."""
        ...


SNAPSHOT = Function(
    "lore_session_snapshot",
    ("text[]", "text", "integer", "text", "text", "integer", "integer", "text[]", "integer"),
)
RECORD = Function("lore_injection_record", ("jsonb", "integer"))
INBOX = Function("lore_prompt_inbox", ("text", "bigint", "bigint", "integer"))
HANDOFF = Function("lore_handoff_record", ("jsonb",))
# The session start's read with its memory stamp (migration 0023), the record of a kept text shown
# again while the stamp is unchanged, and the trim of the change rows no stamp needs.
START_READ = Function("lore_session_start_read", SNAPSHOT.types)
TRIM = Function("lore_memory_changes_trim", ("text[]",))
XMAX = Function("lore_snapshot_xmax", ())
