"""`lore export` / `lore import`: the whole memory as JSON Lines, lossless between two databases.

Format (one JSON object per line):

    {"lore_export": 1, "schema": 5, "exported_at": "…", "space": null}       header
    {"table": "facts", "row": {"version_id": 1, "lineage": 1, …}}           one line per row
    …
    {"end": true, "rows": 123, "counts": {"facts": 10, …}}                 trailer

Rows are every column but generated ones (notes.tsv), as PostgreSQL's own JSON of the row: timestamps
with microseconds and offset, vectors as pgvector text, so that the round trip is exact. Tables, in
dependency order: every version of facts and notes (history), edges, forget_log, irrelevant, tasks,
task_events, messages, purge_log, markdown_sections, handoffs. Accounts (users, tokens, OAuth) are
not memory and are never exported. A file without its trailer (cut short) is refused.

Import checks every line before the first insert: its shape, its length (MAX_LINE), and every value
against the type of its column in the target (an id that is a list, a NUL byte, a lone surrogate, a
timestamp without a zone): a damaged file is refused with the number of its line, never a traceback.
Import runs in one transaction (all or nothing) and keeps every id that is free in the target, so an
import into an empty database reproduces the source exactly. An item already present with the same
content (the same file imported twice, or a subset of what is there) is skipped; an item whose id is
taken by something else gets a new id, and references to it (edges, tasks, replies, forget log) follow.
Secrets are not scanned on import: the rows were accepted once (possibly with --allow-secret).

The package: `tables` (the tables, their filters and keys: in one place), `export`, `reading` (a
file's lines and shape), `values` (each value against its column) and `importer`.
"""

from __future__ import annotations

from lore.store.transfer.export import export
from lore.store.transfer.importer import IMPORT_LOCK, Report, load
from lore.store.transfer.reading import MAX_LINE, lines_of, parse
from lore.store.transfer.tables import FORMAT, TABLES, columns

__all__ = [
    "FORMAT",
    "IMPORT_LOCK",
    "MAX_LINE",
    "TABLES",
    "Report",
    "columns",
    "export",
    "lines_of",
    "load",
    "parse",
]
