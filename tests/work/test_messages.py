"""Messages against the real database: who may send, replies, threads, exactly-once reading."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from lore.core.config import parse_config
from lore.core.errors import InvalidInput, NotFound, Refused
from lore.store import messages

from .conftest import Spaces


def test_send_needs_accepts_from_and_a_reply_does_not(spaces: Spaces, conn: psycopg.Connection) -> None:
    # beta accepts nobody: alpha may not write there
    with pytest.raises(Refused) as err:
        messages.send(conn, spaces.config, spaces.origin("alpha"), "beta", "hello?")
    assert "accepts_from" in err.value.hint and str(spaces.config.path) in err.value.hint
    assert conn.execute("SELECT count(*) FROM messages").fetchone() == (0,)
    # alpha accepts beta: beta asks, alpha answers
    question = messages.send(conn, spaces.config, spaces.origin("beta", "codex"), "alpha", "which port?")
    assert (question.from_space, question.to_space, question.source, question.thread) == (
        "beta",
        "alpha",
        "codex",
        question.num,
    )
    answer = messages.send(conn, spaces.config, spaces.origin("alpha"), "beta", "8765", reply_to=question.num)
    assert answer.reply_to == question.num and answer.thread == question.num
    # a reply goes back to the asker only
    with pytest.raises(InvalidInput) as wrong:
        messages.send(conn, spaces.config, spaces.origin("alpha"), "gamma", "8765", reply_to=question.num)
    assert "goes to 'beta'" in wrong.value.message
    # beta continuing its own thread still needs alpha's consent (it has it); gamma cannot see the thread
    follow = messages.send(conn, spaces.config, spaces.origin("beta"), "alpha", "thanks", reply_to=answer.num)
    assert follow.thread == question.num
    with pytest.raises(NotFound):
        messages.send(conn, spaces.config, spaces.origin("gamma"), "alpha", "me too", reply_to=question.num)
    assert [m.body for m in messages.thread(conn, "alpha", answer.num)] == ["which port?", "8765", "thanks"]


def test_a_space_that_answered_cannot_keep_writing_into_a_space_that_never_accepted_it(
    spaces: Spaces, conn: psycopg.Connection
) -> None:
    """beta asks alpha (alpha accepts beta); alpha may answer, as often as it likes, but alpha's own
    answer is not a licence: continuing from it into beta (which accepts nobody) is refused."""
    question = messages.send(conn, spaces.config, spaces.origin("beta"), "alpha", "which port?")
    answer = messages.send(conn, spaces.config, spaces.origin("alpha"), "beta", "8765", reply_to=question.num)
    again = messages.send(
        conn, spaces.config, spaces.origin("alpha"), "beta", "or 8766", reply_to=question.num
    )
    with pytest.raises(Refused) as err:
        messages.send(conn, spaces.config, spaces.origin("alpha"), "beta", "and more", reply_to=answer.num)
    assert err.value.message == "Space 'beta' does not accept tasks or messages from 'alpha'."
    rows = conn.execute("SELECT id, from_space, to_space, reply_to FROM messages ORDER BY id").fetchall()
    assert rows == [
        (question.num, "beta", "alpha", None),
        (answer.num, "alpha", "beta", question.num),
        (again.num, "alpha", "beta", question.num),
    ]


def test_a_thread_started_with_consent_stops_when_the_consent_is_withdrawn(
    spaces: Spaces, conn: psycopg.Connection
) -> None:
    """alpha starts a thread into gamma (gamma accepts alpha); gamma then drops alpha from its
    accepts_from: alpha continuing its own thread is refused, gamma may still answer alpha's message."""
    started = messages.send(conn, spaces.config, spaces.origin("alpha"), "gamma", "status?")
    withdrawn = parse_config(
        '[[space]]\nid = "alpha"\naccepts_from = ["beta"]\n\n[[space]]\nid = "beta"\n\n'
        '[[space]]\nid = "gamma"\n',
        spaces.config.path or Path("/dev/null"),
    )
    with pytest.raises(Refused):
        messages.send(conn, withdrawn, spaces.origin("alpha"), "gamma", "anyone?", reply_to=started.num)
    with pytest.raises(Refused):
        messages.send(conn, withdrawn, spaces.origin("alpha"), "gamma", "new thread")
    answer = messages.send(conn, withdrawn, spaces.origin("gamma"), "alpha", "green", reply_to=started.num)
    rows = conn.execute("SELECT id, from_space, to_space FROM messages ORDER BY id").fetchall()
    assert rows == [(started.num, "alpha", "gamma"), (answer.num, "gamma", "alpha")]


def test_unknown_space(spaces: Spaces, conn: psycopg.Connection) -> None:
    with pytest.raises(NotFound) as err:
        messages.send(conn, spaces.config, spaces.origin("alpha"), "delta", "hi")
    assert "alpha, beta, gamma" in err.value.hint


def test_read_marks_read_once_and_skips_own_session(spaces: Spaces, conn: psycopg.Connection) -> None:
    cfg = spaces.config
    messages.send(conn, cfg, spaces.origin("beta"), "alpha", "one")
    messages.send(conn, cfg, spaces.origin("alpha"), "alpha", "note to my other session", session="s1")
    got, left = messages.read(conn, "alpha", "claude-code", session="s1")
    assert [m.body for m in got] == ["one"] and left == 0  # its own message is not for it...
    assert got[0].read_by == "claude-code" and got[0].read_at is not None
    assert messages.read(conn, "alpha", "x", session="s1") == ([], 0)
    assert messages.unread(conn, "alpha")[1] == 1  # ...it stays unread for the space's other sessions
    other, left = messages.read(conn, "alpha", "cursor", session="s2")
    assert [m.body for m in other] == ["note to my other session"] and left == 0
    unread, n = messages.unread(conn, "alpha")
    assert (unread, n) == ([], 0)


def test_limits_are_enforced_by_the_database_too(spaces: Spaces, conn: psycopg.Connection) -> None:
    with pytest.raises(psycopg.errors.CheckViolation):
        conn.execute(
            "INSERT INTO messages (to_space, from_space, body, source) VALUES ('alpha', 'beta', %s, 't')",
            ("x" * 4001,),
        )
    conn.rollback()


def test_exactly_once_under_eight_concurrent_readers(
    spaces: Spaces, conn: psycopg.Connection, db_url: str
) -> None:
    total = 400
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO messages (to_space, from_space, body, source) VALUES ('alpha', 'beta', %s, 'bench')",
            [(f"message {i}",) for i in range(total)],
        )
    conn.commit()
    got: list[list[int]] = [[] for _ in range(8)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def reader(index: int) -> None:
        try:
            with psycopg.connect(db_url) as c:
                start.wait()
                while True:
                    batch, left = messages.read(c, "alpha", f"reader-{index}", limit=7)
                    got[index].extend(m.num for m in batch)
                    # An empty batch only means the rest is locked by other readers right now
                    # (SKIP LOCKED): done when nothing is left unread.
                    if not batch and left == 0:
                        return
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    every = [n for batch in got for n in batch]
    assert len(every) == total and len(set(every)) == total  # each message read exactly once
    assert sum(1 for batch in got if batch) >= 2  # they really did run concurrently
    readers = conn.execute(
        "SELECT count(DISTINCT read_by), count(*) FILTER (WHERE read_at IS NULL) FROM messages"
    ).fetchone()
    assert readers is not None and readers[1] == 0


def test_the_domain_modules_import_nothing_of_the_embedder() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, lore.store.messages, lore.store.tasks, lore.store.listen, lore.core.inbox\n"
        "print(sorted(m for m in sys.modules if 'embed' in m or m.split('.')[0] in ('onnxruntime', 'numpy')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"
