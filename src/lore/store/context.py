"""A note's context: what it is indexed with besides itself (docs/design.md, Retrieval).

A short note depends on its neighbours ("yes, the second one", "that fixed it"). Each note written in
an agent session (`notes.session`) is indexed with the note written just before it in the same
session and space (`context_before`: in its vector and, at the lowest weight, in its keyword text),
and its arrival adds it to that previous note's keyword text (`context_after`: the previous note's
vector is not made again). What is stored and shown stays the note itself. The embedding worker
fills contexts off the write path (before it embeds the note), `lore reindex --all` rebuilds them.
"""

from __future__ import annotations

import psycopg

CONTEXT_CHARS = 400  # of the neighbour's title and body (the 400 in _WAITING)
BATCH = 64

# The notes not looked at yet, each with the current version of the note before it in its session
# (the highest lineage below its own: a note forgotten since is skipped, a revised one read as it is
# now); a note's text here is its title and body, at most CONTEXT_CHARS.
_WAITING = """
SELECT n.version_id, left(coalesce(n.title || E'\\n', '') || n.body, 400), p.version_id, p.text
FROM (SELECT * FROM notes
      WHERE session IS NOT NULL AND context_before IS NULL AND superseded_at IS NULL
      ORDER BY version_id LIMIT %s) n
LEFT JOIN LATERAL (
    SELECT b.version_id, left(coalesce(b.title || E'\\n', '') || b.body, 400) AS text FROM notes b
    WHERE b.space = n.space AND b.session = n.session AND b.lineage < n.lineage AND b.superseded_at IS NULL
    ORDER BY b.lineage DESC LIMIT 1) p ON true
ORDER BY n.version_id
"""
_BEFORE = "UPDATE notes SET context_before = %s WHERE version_id = %s AND context_before IS NULL"
_AFTER = "UPDATE notes SET context_after = %s WHERE version_id = %s AND superseded_at IS NULL"
_RESET = """UPDATE notes SET context_before = NULL, context_after = NULL
WHERE session IS NOT NULL AND superseded_at IS NULL"""


def fill(conn: psycopg.Connection, limit: int = BATCH) -> int:
    """Give the next `limit` notes waiting for it their context (and their previous notes the text
    that came after). Returns how many notes got one. Two processes doing it at once write the same."""
    rows = conn.execute(_WAITING, (limit,)).fetchall()
    conn.commit()
    if not rows:
        return 0
    with conn.transaction(), conn.cursor() as cur:
        cur.executemany(_BEFORE, [(before or "", version) for version, _, _, before in rows])
        cur.executemany(_AFTER, [(text, previous) for _, text, previous, _ in rows if previous is not None])
    return len(rows)


def rebuild(conn: psycopg.Connection, *, everything: bool) -> int:
    """Fill every waiting context (`everything`: make every context again first). Returns how many."""
    if everything:
        with conn.transaction():
            conn.execute(_RESET)
    done = 0
    while count := fill(conn):
        done += count
    return done
