"""`lore tasks` and `lore messages` from a terminal (the CLI's main, in this process): the space of the
directory."""

from __future__ import annotations

import subprocess
import threading
import time

import psycopg
from support import cli

from lore.store import messages

from .conftest import Spaces


def lore(spaces: Spaces, where: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cli.run(*args, cwd=spaces.dirs[where], env=spaces.env)  # in this process: support/cli.py


def test_tasks_from_a_terminal(spaces: Spaces, conn: psycopg.Connection) -> None:
    filed = lore(spaces, "beta", "tasks", "file", "Fix CI", "red since Monday", "--to", "alpha")
    assert filed.returncode == 0 and filed.stdout == "Filed n_1 (inbox) in space alpha.\n", filed.stderr
    refused = lore(spaces, "alpha", "tasks", "file", "Nope", "--to", "beta")
    assert refused.returncode == 1 and "accepts_from" in refused.stderr and refused.stdout == ""
    assert lore(spaces, "alpha", "tasks", "file", "Write docs").returncode == 0
    listed = lore(spaces, "alpha", "tasks")
    assert listed.stdout.splitlines() == [
        "Tasks of space alpha (2):",
        "- n_1 [inbox] from beta: Fix CI — red since Monday",
        "- n_2 [todo]: Write docs — Write docs",
    ]
    moved = lore(spaces, "alpha", "tasks", "update", "n_1", "done", "--note", "fixed the runner")
    assert moved.stdout == "n_1: inbox → done.\n"
    assert "Fix CI" not in lore(spaces, "alpha", "tasks").stdout
    assert "[done]" in lore(spaces, "alpha", "tasks", "list", "--all").stdout
    shown = lore(spaces, "alpha", "tasks", "show", "n_1").stdout
    assert "filed" in shown and "→ done by alpha (cli): fixed the runner" in shown
    bad = lore(spaces, "alpha", "tasks", "update", "n_1", "finished")
    assert bad.returncode == 1 and "inbox, todo, doing, blocked, done" in bad.stderr


def test_messages_from_a_terminal(spaces: Spaces, conn: psycopg.Connection) -> None:
    sent = lore(spaces, "beta", "messages", "send", "alpha", "Which port?")
    assert sent.stdout == "Sent m_1 to alpha.\n", sent.stderr
    listed = lore(spaces, "alpha", "messages").stdout
    assert "m_1 from beta (cli)" in listed and "Which port? [unread]" in listed
    read = lore(spaces, "alpha", "messages", "read").stdout
    assert "Which port?" in read and read.endswith("1 read.\n")
    assert lore(spaces, "alpha", "messages", "read").stdout == "No unread messages.\n"
    assert "[read]" in lore(spaces, "alpha", "messages").stdout
    assert "[to beta, unread]" not in lore(spaces, "beta", "messages").stdout
    assert "[to alpha, read]" in lore(spaces, "beta", "messages").stdout


def test_a_terminal_cannot_write_where_it_is_not_accepted(spaces: Spaces, conn: psycopg.Connection) -> None:
    """beta accepts nobody. alpha's terminal may not start a thread there, nor continue one from
    its own answer to beta's question; answering beta's question itself is allowed."""
    refused = lore(spaces, "alpha", "messages", "send", "beta", "hello?")
    assert refused.returncode == 1 and refused.stdout == "", refused.stderr
    assert (
        "does not accept tasks or messages from 'alpha'" in refused.stderr
        and "accepts_from" in refused.stderr
    )
    assert lore(spaces, "beta", "messages", "send", "alpha", "Which port?").stdout == "Sent m_1 to alpha.\n"
    answered = lore(spaces, "alpha", "messages", "send", "beta", "8765", "--reply-to", "m_1")
    assert answered.stdout == "Sent m_2 to beta.\n", answered.stderr
    more = lore(spaces, "alpha", "messages", "send", "beta", "and more", "--reply-to", "m_2")
    assert more.returncode == 1 and more.stdout == ""
    assert "does not accept tasks or messages from 'alpha'" in more.stderr
    rows = conn.execute("SELECT from_space, to_space, body FROM messages ORDER BY id").fetchall()
    assert rows == [("beta", "alpha", "Which port?"), ("alpha", "beta", "8765")]
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


def test_send_and_wait_for_the_reply(spaces: Spaces, conn: psycopg.Connection) -> None:
    def answer() -> None:
        with psycopg.connect(conn.info.dsn) as c:
            for _ in range(200):
                waiting, _ = messages.unread(c, "gamma")
                c.commit()
                if waiting:
                    messages.send(
                        c, spaces.config, spaces.origin("gamma"), "alpha", "8765", reply_to=waiting[0].num
                    )
                    return
                time.sleep(0.05)

    helper = threading.Thread(target=answer)
    helper.start()
    waited = lore(spaces, "alpha", "messages", "send", "gamma", "Which port?", "--wait", "20")
    helper.join(30)
    assert waited.returncode == 0, waited.stderr
    assert waited.stdout.splitlines()[0] == "Sent m_1 to gamma; waiting up to 20 s for the reply…"
    assert "m_2 from gamma (test), re m_1" in waited.stdout and waited.stdout.rstrip().endswith("8765")
    quiet = lore(spaces, "alpha", "messages", "send", "gamma", "anyone?", "--wait", "0.3")
    assert quiet.returncode == 1 and "No reply yet" in quiet.stdout
