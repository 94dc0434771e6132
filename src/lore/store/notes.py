"""Notes: searchable text with a kind, tags and an embedding. Public id: `n_<lineage>`.

Same belief-time columns as facts: a revision closes the current version and writes the next;
forget closes belief and records the reason in forget_log. Search is lore.search; the
embedding is filled after the write by lore.store.vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg
from psycopg.rows import class_row, dict_row

from lore.core import ids
from lore.core.admission import NoteCandidate
from lore.core.errors import NotFound
from lore.core.rows import Note as Note
from lore.core.session import Origin
from lore.store.versions import Versioned

_COLUMNS = (
    "lineage, version_id, space, kind, title, body, tags, recorded_at, superseded_at, source, workspace, "
    "coalesce(happened_at, recorded_at) AS happened_at"
)
VERSIONS = Versioned("notes", "note", _COLUMNS, Note, ids.note, "note_lineage_seq", "search_notes", "edit")


def remember(
    conn: psycopg.Connection,
    origin: Origin,
    body: str,
    *,
    kind: str = "note",
    title: str | None = None,
    tags: Sequence[str] = (),
    happened_at: datetime | None = None,
) -> Note:
    """A new note, unchecked (`lore import-markdown` refuses credentials first; tests write known rows)."""
    return write(conn, origin, NoteCandidate(body, kind, title, tuple(tags), happened_at))


def write(conn: psycopg.Connection, origin: Origin, new: NoteCandidate) -> Note:
    """A new note, as given (lore.service.memory.remember_note admits it first), from `origin`'s
    session (its context is the note before it there: filled later by the embedding worker);
    `happened_at`: when what it says happened (None: now)."""
    fields: dict[str, object] = {"kind": new.kind, "title": new.title, "body": new.body}
    fields |= {"tags": list(new.tags), "session": origin.session}
    if new.happened_at is not None:
        fields["happened_at"] = new.happened_at
    with conn.transaction():
        return VERSIONS.insert(conn, origin, fields)


def get(conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> Note:
    with conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM notes WHERE lineage = %s AND superseded_at IS NULL AND space = ANY(%s)",
            (lineage, list(spaces)),
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(
            f"No note n_{lineage} in this session's spaces.", "Call search_notes to find note ids."
        )
    return row


def lock(conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int) -> Note:
    """The current version of `lineage`, locked until the transaction ends, if `origin` may edit it."""
    return VERSIONS.lock_current(conn, origin, readable, lineage, "Edit it")


def write_next(conn: psycopg.Connection, origin: Origin, old: Note, new: NoteCandidate) -> Note:
    """Close `old` (locked) and write its next version, `new`, as given (same lineage: edges and the
    task state stay attached; the new text is embedded later, like a new note)."""
    fields: dict[str, object] = {"kind": new.kind, "title": new.title, "body": new.body}
    fields |= {"tags": list(new.tags)} | _kept(conn, old.version_id)
    fields["happened_at"] = new.happened_at or old.happened_at  # when it happened stays, unless said
    return VERSIONS.next(conn, origin, old, fields)


_KEPT = "SELECT session, context_before, context_after FROM notes WHERE version_id = %s"


def _kept(conn: psycopg.Connection, version_id: int) -> dict[str, object]:
    """What a note's next version keeps of its version `version_id`: where it was written (its
    session and context: its neighbours stay its neighbours)."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(_KEPT, (version_id,))
        row = cur.fetchone()
    assert row is not None
    return dict(row)


# Handoffs listed per repository (space, root) in a list of notes: the latest ones. Older handoffs stay
# (search finds them; the web UI's Sessions page lists them) but never crowd a notes list.
HANDOFFS_LISTED = 3
_LATEST_HANDOFFS = """SELECT h.note FROM (
    SELECT note, row_number() OVER (PARTITION BY space, root ORDER BY updated_at DESC, id DESC) AS k
    FROM handoffs WHERE space = ANY(%(spaces)s) AND note IS NOT NULL) h
WHERE h.k <= %(keep)s"""


def recent(
    conn: psycopg.Connection, spaces: Sequence[str], *, kinds: Sequence[str] | None = None, limit: int = 50
) -> list[Note]:
    """Current notes of `spaces`, newest first (the web UI's list before any search): of the
    handoffs, only the latest HANDOFFS_LISTED of each repository, unless handoffs are asked for."""
    every_handoff = bool(kinds) and "handoff" in (kinds or ())
    with conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(
            f"""SELECT {_COLUMNS} FROM notes
                WHERE space = ANY(%(spaces)s) AND superseded_at IS NULL
                  AND (%(kinds)s::text[] IS NULL OR kind = ANY(%(kinds)s))
                  AND (%(every)s OR kind <> 'handoff' OR lineage IN ({_LATEST_HANDOFFS}))
                ORDER BY recorded_at DESC, lineage DESC LIMIT %(limit)s""",
            {
                "spaces": list(spaces),
                "kinds": list(kinds) if kinds else None,
                "every": every_handoff,
                "keep": HANDOFFS_LISTED,
                "limit": limit,
            },
        )
        return cur.fetchall()


def older_handoffs(conn: psycopg.Connection, spaces: Sequence[str]) -> int:
    """How many current handoff notes `recent` leaves out (older than the latest of their repository)."""
    row = conn.execute(
        f"""SELECT count(*) FROM notes WHERE space = ANY(%(spaces)s) AND superseded_at IS NULL
              AND kind = 'handoff' AND lineage NOT IN ({_LATEST_HANDOFFS})""",
        {"spaces": list(spaces), "keep": HANDOFFS_LISTED},
    ).fetchone()
    return int(row[0]) if row else 0


# The current notes of a space sharing a word with a text's head (handoffs aside: lore writes them),
# most alike first: what the write-time check compares a new note with.
_ALIKE = f"""SELECT {_COLUMNS} FROM notes n, lore_any_words(%(text)s) q
WHERE n.space = %(space)s AND n.superseded_at IS NULL AND n.kind <> 'handoff'
  AND CASE WHEN numnode(q) = 0 THEN n.tsv = ''::tsvector ELSE n.tsv @@ q END
ORDER BY ts_rank(n.tsv, q, 8) DESC, n.recorded_at DESC, n.lineage DESC
LIMIT %(limit)s"""


def alike(conn: psycopg.Connection, space: str, text: str, *, limit: int = 20) -> list[Note]:
    """Current notes of `space` (not handoffs) sharing a word with `text`, the most alike first."""
    with conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(_ALIKE, {"space": space, "text": text, "limit": limit})
        return cur.fetchall()


def everything(conn: psycopg.Connection, space: str, *, max_chars: int = 4000) -> list[Note]:
    """Every current note of `space` except handoffs and tasks (the first `max_chars` of each
    body), newest first: what `lore tidy` compares."""
    with conn.cursor(row_factory=class_row(Note)) as cur:
        cur.execute(
            """SELECT lineage, version_id, space, kind, title, left(body, %s) AS body, tags, recorded_at,
                      superseded_at, source, workspace
               FROM notes WHERE space = %s AND superseded_at IS NULL AND kind NOT IN ('handoff', 'task')
               ORDER BY recorded_at DESC, lineage DESC""",
            (max_chars, space),
        )
        return cur.fetchall()


def current(conn: psycopg.Connection, spaces: Sequence[str], lineages: Sequence[int]) -> dict[int, Note]:
    """The current versions of several notes that `spaces` can read, by lineage."""
    return VERSIONS.current(conn, spaces, lineages)


def history(conn: psycopg.Connection, spaces: Sequence[str], lineage: int) -> list[Note]:
    """Every version of one note, oldest first (empty when not visible from `spaces`)."""
    return VERSIONS.history(conn, spaces, lineage)


def forget(
    conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int, reason: str
) -> Note:
    """Close belief in the current version and record who forgot it and why. The rows stay."""
    return VERSIONS.forget(conn, origin, readable, lineage, reason)


def restore(conn: psycopg.Connection, origin: Origin, readable: Sequence[str], lineage: int) -> Note:
    """Believe a forgotten note again: its last version written anew as the current one (undoing a
    merge or a forget from `lore tidy`; embedded again in the background)."""
    return VERSIONS.restore(
        conn,
        origin,
        readable,
        lineage,
        lambda last: {"kind": last.kind, "title": last.title, "body": last.body, "tags": list(last.tags)},
    )


def spaces_of(conn: psycopg.Connection, lineages: Sequence[int]) -> dict[int, str]:
    """The space of each note (any space: for a person's explanation of a search)."""
    rows = conn.execute(
        "SELECT lineage, space FROM notes WHERE lineage = ANY(%s) AND superseded_at IS NULL",
        (list(lineages),),
    ).fetchall()
    return {int(r[0]): str(r[1]) for r in rows}
