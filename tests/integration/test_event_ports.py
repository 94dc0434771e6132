"""The agent events' two ways to the database (lore.db.calls.Port): psql (the local hooks) and psycopg
(/api, the CLI, a spool replayed) build the same statement for each SQL function of lore.db.calls and
give the same answer, whatever the text in the arguments (quotes, dollar signs, a psql meta-command,
newlines, other scripts)."""

from __future__ import annotations

import time

import psycopg
import pytest

from lore.core.errors import StoreError
from lore.db import calls
from lore.db.literals import literal
from lore.db.psql import PsqlPort
from lore.store.port import ConnPort

NASTY = [
    "plain",
    'it\'s "quoted"',
    "$h$ dollar $$ tags $x$",
    "line one\nline two\n\\! echo pwned\n\\q",
    "日本語 — emoji 🎉",
    "",
]


def _psql(url: str, function: calls.Function, *args: object) -> object:
    with PsqlPort(url, deadline=time.monotonic() + 10) as port:
        got = port.call(function, *args)
        port.commit()
    return got


@pytest.mark.parametrize("text", NASTY)
def test_every_literal_reads_back_as_itself(db_url: str, text: str) -> None:
    echo = calls.Function("jsonb_build_array", ("text", "text[]", "jsonb", "integer", "bigint"))
    args = (text, [text, text], {"t": text, "n": None}, 7, 2**40)
    assert _psql(db_url, echo, *args) == [text, [text, text], {"t": text, "n": None}, 7, 2**40]


def test_nulls_and_empty_arrays(db_url: str, conn: psycopg.Connection) -> None:
    echo = calls.Function("jsonb_build_array", ("text", "text[]", "jsonb"))
    assert _psql(db_url, echo, None, [], None) == [None, [], None]
    assert ConnPort(conn).call(echo, None, [], None) == [None, [], None]
    assert literal(None, "text[]") == "NULL::text[]"


def test_both_ports_answer_the_inbox_alike(db_url: str, conn: psycopg.Connection) -> None:
    conn.execute(
        "INSERT INTO messages (thread, to_space, from_space, body, source)"
        " VALUES (1, 'alpha', 'beta', %s, 't')",
        (NASTY[2],),
    )
    conn.commit()
    args = ("alpha", 0, 0, 5)
    through_psql = _psql(db_url, calls.INBOX, *args)
    through_psycopg = ConnPort(conn).call(calls.INBOX, *args)
    assert through_psql == through_psycopg
    assert isinstance(through_psql, dict) and through_psql["messages"][0]["body"] == NASTY[2]


def test_a_record_is_written_once_per_key_through_either_port(db_url: str, conn: psycopg.Connection) -> None:
    row = {
        "kind": "session-start",
        "via": "hook",
        "client": "claude-code",
        "workspace": "/w",
        "space": None,
        "outcome": "config",
        "detail": "no lore config file",
        "text": "lore: …",
        "event_key": "k-1",
    }
    first = _psql(db_url, calls.RECORD, row, 90)
    again = ConnPort(conn).call(calls.RECORD, row, 90)
    assert first == again
    assert conn.execute("SELECT count(*), min(outcome) FROM injections").fetchone() == (1, "config")


def test_a_failed_call_is_a_store_error_and_writes_nothing(db_url: str, conn: psycopg.Connection) -> None:
    with pytest.raises(StoreError), PsqlPort(db_url, deadline=time.monotonic() + 10) as port:
        port.call(calls.RECORD, {"kind": "session-start", "via": "nowhere"}, 90)
    assert conn.execute("SELECT count(*) FROM injections").fetchone() == (0,)


def test_retention_is_each_users_own(conn: psycopg.Connection) -> None:
    """Trust, round 4, item 5: in sign-in mode alice's `retention_days = 1` deleted bob's records
    too (one user's setting applied to every user). Each record now belongs to its owner (the user
    before the slash of its space, or the signed-in user of a record with no space), and a write
    deletes only its own owner's records past the retention."""
    port = ConnPort(conn)
    for owner, space in (("alice", "alice/work"), ("bob", "bob/work"), ("bob", None), (None, "work")):
        row = {
            "kind": "session-start",
            "via": "api",
            "client": "c",
            "workspace": "/w",
            "space": space,
            "outcome": "shown",
            "text": "old",
            "owner": owner,
        }
        port.call(calls.RECORD, row, 365)
    conn.execute("UPDATE injections SET at = now() - interval '10 days'")
    conn.commit()
    fresh = {
        "kind": "session-start",
        "via": "api",
        "client": "c",
        "workspace": "/w",
        "space": "alice/work",
        "outcome": "shown",
        "text": "new",
    }
    port.call(calls.RECORD, fresh, 1)  # alice keeps one day
    left = conn.execute("SELECT coalesce(owner, '-'), text FROM injections ORDER BY id").fetchall()
    assert left == [("bob", "old"), ("bob", "old"), ("-", "old"), ("alice", "new")]
