"""Messages: short texts from one space (or session) to another. Public id `m_<id>`.

Addressed to a space: every session of that space shares its inbox. Never embedded, never linked.
Inserting one notifies `lore_messages_v1` (a trigger, see migration 0003); listeners wake on it and
fetch the row. Reading marks a message read exactly once, whatever the number of concurrent
readers (`FOR UPDATE SKIP LOCKED`, then `read_at IS NULL` checked again on the locked row). A
session never reads the messages it sent itself.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import psycopg
from psycopg.rows import class_row

from lore.core import secrets
from lore.core.config import Config
from lore.core.errors import InvalidInput, NotFound
from lore.core.inbox import check_target
from lore.core.rows import Message as Message
from lore.core.session import Origin

_COLUMNS = (
    "id AS num, to_space, from_space, body, reply_to, thread, source, workspace, from_session, "
    "sent_at, read_at, read_by"
)


def send(
    conn: psycopg.Connection,
    config: Config,
    origin: Origin,
    to: str,
    body: str,
    *,
    reply_to: int | None = None,
    session: str | None = None,
    allow_secret: bool = False,
) -> Message:
    """Send `body` to space `to`. Allowed into the sender's own space, into a space whose
    `accepts_from` lists the sender, and as a reply to a message that space sent here."""
    secrets.refuse(("body", body), what="message", allow=allow_secret)
    with conn.transaction():
        if reply_to is None:
            check_target(config, origin.space, to)
        else:
            original = get(conn, origin.space, reply_to)
            other = original.from_space if original.to_space == origin.space else original.to_space
            if to != other:
                raise InvalidInput(
                    f"{original.id} is a message between {original.from_space} and {original.to_space}; "
                    f"a reply to it goes to {other!r}, not {to!r}.",
                    f"Send it with to={other!r}, or leave out reply_to to start a new thread.",
                )
            if original.to_space != origin.space:  # continuing a thread this space started
                check_target(config, origin.space, to)
            elif config.target(to) is None:  # its space went, or the teammates' link did
                raise NotFound(f"No space {to!r} in the lore config any more.", "Start a new thread.")
        with conn.cursor(row_factory=class_row(Message)) as cur:
            cur.execute(
                f"""INSERT INTO messages
                        (to_space, from_space, body, reply_to, source, workspace, from_session, client_name)
                    VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING {_COLUMNS}""",
                (
                    to,
                    origin.space,
                    body,
                    reply_to,
                    origin.source,
                    origin.workspace,
                    session,
                    origin.client_name,
                ),
            )
            row = cur.fetchone()
    assert row is not None
    return row


def get(conn: psycopg.Connection, space: str, num: int) -> Message:
    """A message sent to or from `space`; any other behaves as missing."""
    with conn.cursor(row_factory=class_row(Message)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE id = %s AND (to_space = %s OR from_space = %s)",
            (num, space, space),
        )
        row = cur.fetchone()
    if row is None:
        raise NotFound(f"No message m_{num} to or from this space.", "read_messages shows the messages here.")
    return row


# A session never reads what it sent itself (a reader without a session, the CLI, reads all).
_NOT_MINE = "(%(session)s::text IS NULL OR from_session IS DISTINCT FROM %(session)s::text)"
# The rows to claim are picked (and locked) once, in a CTE: `WHERE id IN (SELECT ... LIMIT ... FOR
# UPDATE SKIP LOCKED)` may be run again by the plan (a rescan locks rows it then does not update).
_CLAIM = f"""
WITH picked AS MATERIALIZED (
    SELECT id FROM messages
    WHERE to_space = %(space)s AND read_at IS NULL AND {_NOT_MINE}
    ORDER BY id LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED)
UPDATE messages SET read_at = now(), read_by = %(reader)s
FROM picked WHERE messages.id = picked.id AND messages.read_at IS NULL
RETURNING messages.{_COLUMNS}
"""
_UNREAD = f"""
SELECT count(*) FROM messages
WHERE to_space = %(space)s AND read_at IS NULL AND {_NOT_MINE}
"""


def read(
    conn: psycopg.Connection, space: str, reader: str, *, session: str | None = None, limit: int = 10
) -> tuple[list[Message], int]:
    """Claim up to `limit` unread messages of `space` (marking them read); returns them, oldest
    first, and how many stay unread. Concurrent readers never get the same message."""
    params = {"space": space, "reader": reader, "session": session, "limit": limit}
    with conn.transaction():
        with conn.cursor(row_factory=class_row(Message)) as cur:
            cur.execute(_CLAIM, params)
            rows = sorted(cur.fetchall(), key=lambda m: m.num)
        left = conn.execute(_UNREAD, params).fetchone()
    return rows, int(left[0]) if left else 0


def unread(
    conn: psycopg.Connection, space: str, *, session: str | None = None, limit: int = 50
) -> tuple[list[Message], int]:
    """Unread messages of `space`, oldest first, without marking them read; and how many there are."""
    params = {"space": space, "session": session, "limit": limit}
    with conn.cursor(row_factory=class_row(Message)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE to_space = %(space)s AND read_at IS NULL "
            f"AND {_NOT_MINE} ORDER BY id LIMIT %(limit)s",
            params,
        )
        rows = cur.fetchall()
    total = conn.execute(_UNREAD, params).fetchone()
    return rows, int(total[0]) if total else len(rows)


def recent(conn: psycopg.Connection, space: str, *, limit: int = 30) -> list[Message]:
    """The latest messages to or from `space` (read or not), oldest first."""
    with conn.cursor(row_factory=class_row(Message)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE to_space = %s OR from_space = %s "
            "ORDER BY id DESC LIMIT %s",
            (space, space, limit),
        )
        return list(reversed(cur.fetchall()))


def thread(conn: psycopg.Connection, space: str, num: int) -> list[Message]:
    """Every message of the thread `num` belongs to that this space can see, oldest first."""
    root = get(conn, space, num).thread
    with conn.cursor(row_factory=class_row(Message)) as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM messages WHERE thread = %s AND (to_space = %s OR from_space = %s) "
            "ORDER BY id",
            (root, space, space),
        )
        return cur.fetchall()


# --- on a listener's own (async) connection ------------------------------------------------------

_CLAIM_REPLY = f"""
UPDATE messages SET read_at = coalesce(read_at, now()), read_by = coalesce(read_by, %(reader)s)
WHERE id = (SELECT id FROM messages WHERE reply_to = %(num)s AND to_space = %(space)s ORDER BY id LIMIT 1)
RETURNING {_COLUMNS}
"""
_SINCE = f"""
SELECT {_COLUMNS} FROM messages
WHERE to_space = %(space)s AND id > %(after)s AND {_NOT_MINE}
ORDER BY id LIMIT 50
"""
_LATEST = "SELECT coalesce(max(id), 0) FROM messages"
_ARRIVED = """
SELECT coalesce(max(id), %(after)s), coalesce(array_agg(DISTINCT to_space), ARRAY[]::text[])
FROM messages WHERE id > %(after)s
"""


def claim_reply_now(conn: psycopg.Connection, space: str, num: int, reader: str) -> Message | None:
    """The first reply to message `num` that reached `space`, marked read (the waiting sender got
    it): what a waiter of lore.store.replies runs, on a pooled connection."""
    with conn.cursor(row_factory=class_row(Message)) as cur:
        cur.execute(_CLAIM_REPLY, {"space": space, "num": num, "reader": reader})
        return cur.fetchone()


async def await_reply(
    claim: Callable[[], Awaitable[Message | None]], woken: Callable[[float], Awaitable[bool]], timeout: float
) -> Message | None:
    """Claim the reply now, and again each time `woken(seconds)` says a message arrived (True; False
    when the time ran out), until `timeout` seconds pass. The waiting is on the process's one LISTEN
    connection (lore.store.replies: send_message with wait_seconds, and `lore messages send --wait`
    through it), never a poll."""
    deadline = time.monotonic() + timeout
    look = True
    while True:
        if look:
            found = await claim()
            if found is not None:
                return found
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        look = await woken(remaining)


def since_now(
    conn: psycopg.Connection, space: str, after: int, *, session: str | None = None
) -> list[Message]:
    """`since` on a pooled (synchronous) connection."""
    with conn.cursor(row_factory=class_row(Message)) as cur:
        cur.execute(_SINCE, {"space": space, "after": after, "session": session})
        return cur.fetchall()


async def since(
    conn: psycopg.AsyncConnection, space: str, after: int, *, session: str | None = None
) -> list[Message]:
    """Messages to `space` with an id above `after`, oldest first (what `lore listen` prints)."""
    async with conn.cursor(row_factory=class_row(Message)) as cur:
        await cur.execute(_SINCE, {"space": space, "after": after, "session": session})
        return await cur.fetchall()


def latest_id(conn: psycopg.Connection) -> int:
    """The newest message's id (0: none yet)."""
    row = conn.execute(_LATEST).fetchone()
    return int(row[0]) if row else 0


def arrived_since(conn: psycopg.Connection, after: int) -> tuple[int, list[str]]:
    """(the newest message id, the spaces messages reached since message `after`): the poll that
    backs LISTEN up (lore.store.replies)."""
    row = conn.execute(_ARRIVED, {"after": after}).fetchone()
    return (int(row[0]), list(row[1])) if row else (after, [])


async def latest(conn: psycopg.AsyncConnection) -> int:
    cur = await conn.execute(_LATEST)
    row = await cur.fetchone()
    return int(row[0]) if row else 0
