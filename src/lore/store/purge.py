"""`lore purge ID`: physically erase one item and everything that repeats or points at it.

Human-only (a CLI command, never an MCP tool): forget keeps history for audit; purge is for what must
not be kept at all, such as a secret pasted by mistake. In one transaction:

    f_N   every version of the fact, and its forget_log rows (their reasons may quote it)
    n_N   every version of the note (a task's too), edges from and to it, mark_irrelevant rows about
          it, its task row and task events, forget_log rows, its markdown import record, and the
          handoff row it is the note of (which repeats its text)
    m_N   the message; replies to it stay, with reply_to cleared (their thread id is unchanged)

What remains is one purge_log row: the id, its space, how many rows went, who ran it and when, never
the content. Ids are global: purge finds the item in whichever space holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from lore.core import ids
from lore.core.errors import InvalidInput, NotFound
from lore.store import injections, tidy

# Tables that held the erased rows: `VACUUM` them afterwards so dead tuples are cleared from disk pages.
TABLES = {
    "f": ("facts", "forget_log"),
    "n": (
        "notes",
        "edges",
        "irrelevant",
        "tasks",
        "task_events",
        "forget_log",
        "markdown_sections",
        "handoffs",
    ),
    "m": ("messages",),
}


@dataclass(frozen=True)
class Plan:
    item: str
    space: str
    counts: dict[str, int]  # table -> rows that go
    preview: str  # the first characters of the current (or last) text, for the confirmation

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def describe(self) -> str:
        parts = ", ".join(f"{n} {table}" for table, n in self.counts.items() if n)
        return f"{self.item} in space {self.space} ({self.preview!r}): {parts}"


def parse_id(value: str) -> tuple[str, int]:
    found = ids.match(value)
    if found is None:
        raise InvalidInput(
            f"{value[:40]!r} is not a lore id.", "Pass a fact (f_12), note or task (n_7) or message (m_3) id."
        )
    return found


_COUNTS = {
    "f": {
        "facts": "SELECT count(*) FROM facts WHERE lineage = %(n)s",
        "forget_log": "SELECT count(*) FROM forget_log WHERE item_kind = 'fact' AND lineage = %(n)s",
    },
    "n": {
        "notes": "SELECT count(*) FROM notes WHERE lineage = %(n)s",
        "edges": "SELECT count(*) FROM edges WHERE from_note = %(n)s OR to_note = %(n)s",
        "irrelevant": "SELECT count(*) FROM irrelevant WHERE note = %(n)s",
        "tasks": "SELECT count(*) FROM tasks WHERE lineage = %(n)s",
        "task_events": "SELECT count(*) FROM task_events WHERE lineage = %(n)s",
        "forget_log": "SELECT count(*) FROM forget_log WHERE item_kind = 'note' AND lineage = %(n)s",
        "markdown_sections": "SELECT count(*) FROM markdown_sections WHERE lineage = %(n)s",
        "handoffs": "SELECT count(*) FROM handoffs WHERE note = %(n)s",
    },
    "m": {"messages": "SELECT count(*) FROM messages WHERE id = %(n)s"},
}
_DELETES = {
    "f": [
        "DELETE FROM forget_log WHERE item_kind = 'fact' AND lineage = %(n)s",
        "DELETE FROM facts WHERE lineage = %(n)s",
    ],
    "n": [
        "DELETE FROM edges WHERE from_note = %(n)s OR to_note = %(n)s",
        "DELETE FROM irrelevant WHERE note = %(n)s",
        "DELETE FROM tasks WHERE lineage = %(n)s",  # task_events go with it (ON DELETE CASCADE)
        "DELETE FROM forget_log WHERE item_kind = 'note' AND lineage = %(n)s",
        "DELETE FROM markdown_sections WHERE lineage = %(n)s",
        "DELETE FROM handoffs WHERE note = %(n)s",
        "DELETE FROM notes WHERE lineage = %(n)s",
    ],
    "m": [
        "UPDATE messages SET reply_to = NULL WHERE reply_to = %(n)s",
        # The thread it started goes on from its oldest remaining message (not from a missing id).
        "UPDATE messages SET thread = (SELECT min(id) FROM messages WHERE thread = %(n)s AND id <> %(n)s) "
        "WHERE thread = %(n)s AND id <> %(n)s",
        "DELETE FROM messages WHERE id = %(n)s",
    ],
}
_WHAT = {
    "f": "SELECT space, statement FROM facts WHERE lineage = %(n)s ORDER BY version_id DESC LIMIT 1",
    "n": "SELECT space, coalesce(title, body) FROM notes WHERE lineage = %(n)s "
    "ORDER BY version_id DESC LIMIT 1",
    "m": "SELECT to_space, body FROM messages WHERE id = %(n)s",
}


def plan(conn: psycopg.Connection, item: str) -> Plan:
    """What purging `item` would erase (nothing is changed)."""
    prefix, num = parse_id(item)
    found = conn.execute(_WHAT[prefix], {"n": num}).fetchone()
    if found is None:
        raise NotFound(f"No {item} in this database (already purged?).", "Check the id with `lore export`.")
    counts = {}
    for table, query in _COUNTS[prefix].items():
        row = conn.execute(query, {"n": num}).fetchone()
        counts[table] = int(row[0]) if row else 0
    text = str(found[1])
    preview = text[:12] + ("…" if len(text) > 12 else "")
    return Plan(f"{prefix}_{num}", str(found[0]), counts, preview)


def purge(conn: psycopg.Connection, item: str, by: str) -> Plan:
    """Erase `item` and its history in one transaction; returns what went."""
    prefix, num = parse_id(item)
    with conn.transaction():
        # Lock the item's rows first, so that a session revising it right now waits, then finds nothing.
        table = {"f": "facts", "n": "notes", "m": "messages"}[prefix]
        key = "id" if prefix == "m" else "lineage"
        conn.execute(f"SELECT 1 FROM {table} WHERE {key} = %(n)s FOR UPDATE", {"n": num})
        done = plan(conn, item)
        for statement in _DELETES[prefix]:
            conn.execute(statement, {"n": num})
        injections.scrub(conn, done.item)  # and out of the record of what agents were told
        tidy.scrub(conn, done.item)  # and of the audit of tidying
        conn.execute(
            "INSERT INTO purge_log (item, space, erased, by_user) VALUES (%s, %s, %s, %s)",
            (done.item, done.space, done.total, by),
        )
    return done


def vacuum(conn: psycopg.Connection, item: str, *, full: bool = False) -> None:
    """Clear the erased rows' dead tuples (FULL: rewrite the tables). Needs an autocommit connection."""
    prefix, _ = parse_id(item)
    verb = "VACUUM (FULL)" if full else "VACUUM"
    for table in TABLES[prefix]:
        conn.execute(f"{verb} {table}")
