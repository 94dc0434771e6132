"""What an export holds, in one place: its format number, its tables in dependency order, which rows
of each belong to a set of spaces, the order they are written in, the columns an import needs, the
ids sequences hand out, and what makes two copies of a row the same item."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import psycopg

FORMAT = 1  # the header's lore_export
# Every table of memory, in dependency order (accounts, users, tokens and OAuth are not memory).
TABLES = (
    "facts",
    "notes",
    "edges",
    "forget_log",
    "irrelevant",
    "tasks",
    "task_events",
    "messages",
    "purge_log",
    "markdown_sections",
    "handoffs",
)

# Which rows belong to `--space S`, or to a signed-in user's spaces (a message belongs to both its
# sender's and its target's space).
SPACE_FILTER = {
    "facts": "space = ANY(%(spaces)s)",
    "notes": "space = ANY(%(spaces)s)",
    "edges": "space = ANY(%(spaces)s)",
    "forget_log": "space = ANY(%(spaces)s)",
    "irrelevant": "space = ANY(%(spaces)s)",
    "tasks": "space = ANY(%(spaces)s)",
    "task_events": "lineage IN (SELECT lineage FROM tasks WHERE space = ANY(%(spaces)s))",
    "messages": "to_space = ANY(%(spaces)s) OR from_space = ANY(%(spaces)s)",
    "purge_log": "space = ANY(%(spaces)s)",
    "markdown_sections": "space = ANY(%(spaces)s)",
    "handoffs": "space = ANY(%(spaces)s)",
}
ORDER = {
    "facts": "lineage, version_id",
    "notes": "lineage, version_id",
    "tasks": "lineage",
    "markdown_sections": "space, root, file, section",
    "handoffs": "id",
}
# Columns that may legitimately differ between two copies of the same item (filled in later).
VOLATILE = {"version_id", "id", "embedding", "embedding_model"}


# The columns the importer itself reads (ids it maps, keys it matches on): present and not null.
KEYS = {
    "facts": ("lineage", "version_id", "space", "recorded_at"),
    "notes": ("lineage", "version_id", "space", "recorded_at"),
    "edges": ("from_note", "to_note"),
    "forget_log": ("lineage", "item_kind"),
    "irrelevant": ("note",),
    "tasks": ("lineage",),
    "task_events": ("lineage",),
    "messages": ("id", "thread", "sent_at", "from_space", "to_space", "body", "source"),
    "purge_log": (),
    "markdown_sections": ("lineage",),
    "handoffs": ("space", "client", "session_id"),
}
# Columns that hold ids (their own, or another row's): sequences hand out 1, 2, ...; 0 or less is damage.
IDS = {"version_id", "lineage", "id", "from_note", "to_note", "note", "reply_to", "thread"}
# The ids a sequence hands out, by (table, column): an import moves each sequence past the ids it keeps.
SEQUENCED = (
    ("facts", "lineage"),
    ("notes", "lineage"),
    ("facts", "version_id"),
    ("notes", "version_id"),
    ("edges", "id"),
    ("forget_log", "id"),
    ("irrelevant", "id"),
    ("task_events", "id"),
    ("messages", "id"),
    ("purge_log", "id"),
    ("handoffs", "id"),
)


def columns(conn: psycopg.Connection, table: str) -> list[str]:
    """The table's stored columns in order (generated ones such as notes.tsv left out)."""
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = %s AND is_generated = 'NEVER' ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [r[0] for r in rows]


def content(row: dict[str, Any], cols: Sequence[str]) -> str:
    """What makes two copies of a row the same item (ids and embeddings aside), as a comparable key."""
    return json.dumps([row.get(c) for c in cols if c not in VOLATILE], sort_keys=True)
