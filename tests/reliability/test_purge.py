"""`lore purge ID` erases an item and its whole history (versions, edges, feedback, task state, forget
log), keeps only an id-and-count line in purge_log, asks before it acts, and is no MCP tool."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from support.mcpclient import lore_session

from reliability.conftest import Project
from reliability.fakes import fake_credentials

KEY = fake_credentials(5)["github classic"].split("=", 1)[1]


def test_purge_a_fact_erases_every_version_and_its_forget_log(
    project: Project, conn: psycopg.Connection
) -> None:
    assert project.lore("facts", "add", "keep me").returncode == 0
    assert project.lore("facts", "add", "--allow-secret", f"token {KEY}").returncode == 0
    assert project.lore("facts", "revise", "f_2", "--allow-secret", f"token {KEY} (rotated)").returncode == 0
    conn.execute(
        "INSERT INTO forget_log (space, item_kind, lineage, reason, source) "
        "VALUES ('p', 'fact', 2, 'oops', 'x')"
    )
    conn.commit()
    refused = project.lore("purge", "f_2")  # stdin is not a terminal: confirmation is --yes
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert conn.execute("SELECT count(*) FROM facts WHERE lineage = 2").fetchone() == (2,)
    done = project.lore("purge", "f_2", "--yes")
    assert done.returncode == 0, done.stderr
    assert "f_2 in space p" in done.stdout and KEY not in done.stdout
    assert conn.execute("SELECT count(*) FROM facts WHERE lineage = 2").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM forget_log").fetchone() == (0,)
    assert conn.execute("SELECT statement FROM facts").fetchall() == [("keep me",)]
    log = conn.execute("SELECT item, space, erased FROM purge_log").fetchall()
    assert log == [("f_2", "p", 3)]
    again = project.lore("purge", "f_2", "--yes")
    assert again.returncode == 1 and "No f_2" in again.stderr
    assert KEY not in project.lore("export").stdout


def test_purge_a_note_takes_its_edges_feedback_and_task_state(
    project: Project, conn: psycopg.Connection
) -> None:
    for body in ("guide one", "guide two"):
        assert project.lore("notes", "add", body).returncode == 0
    assert project.lore("tasks", "file", "rotate", f"old token {KEY}", "--allow-secret").returncode == 0
    assert project.lore("tasks", "update", "n_3", "doing").returncode == 0
    conn.execute(
        "INSERT INTO edges (space, from_note, relation, to_note, source) VALUES ('p', 1, 'refines', 2, 'x')"
    )
    conn.execute(
        "INSERT INTO edges (space, from_note, relation, to_note, source) "
        "VALUES ('p', 3, 'relates_to', 1, 'x')"
    )
    conn.execute(
        "INSERT INTO irrelevant (space, note, query, lexemes, source) VALUES ('p', 3, 'q', '{q}', 'x')"
    )
    conn.commit()
    done = project.lore("purge", "n_3", "--yes")
    assert done.returncode == 0, done.stderr
    remaining = conn.execute(
        "SELECT (SELECT count(*) FROM notes WHERE lineage = 3), (SELECT count(*) FROM tasks), "
        "(SELECT count(*) FROM task_events), (SELECT count(*) FROM irrelevant), "
        "(SELECT array_agg(from_note || '>' || to_note) FROM edges)"
    ).fetchone()
    assert remaining == (0, 0, 0, 0, ["1>2"])


def test_purge_a_message_keeps_its_replies(project: Project, conn: psycopg.Connection) -> None:
    assert project.lore("messages", "send", "q", f"here: {KEY}", "--allow-secret").returncode == 0
    thread = conn.execute("SELECT thread FROM messages").fetchone()
    assert thread is not None
    conn.execute(
        "INSERT INTO messages (to_space, from_space, body, reply_to, source) "
        "VALUES ('p', 'q', 'thanks', 1, 'x')"
    )
    conn.commit()
    reply = conn.execute("SELECT id, thread FROM messages WHERE body = 'thanks'").fetchone()
    assert reply is not None and reply[1] == thread[0]  # in the first message's thread
    assert project.lore("purge", "m_1", "--yes").returncode == 0
    # The thread goes on from its oldest remaining message, not from an id that is gone (an export
    # and import of it then gives the same thread).
    assert conn.execute("SELECT body, reply_to, thread FROM messages").fetchall() == [
        ("thanks", None, reply[0])
    ]


def test_purge_full_leaves_no_bytes_in_the_table_files(
    project: Project, conn: psycopg.Connection, pg_data_dir: Path
) -> None:
    marker = f"unique-marker-{KEY}"
    assert project.lore("facts", "add", "--allow-secret", marker).returncode == 0
    conn.execute("CHECKPOINT")
    conn.commit()
    relation = conn.execute("SELECT pg_relation_filepath('facts')").fetchone()
    assert relation is not None
    before = (pg_data_dir / "pg" / relation[0]).read_bytes()
    assert marker.encode() in before
    assert project.lore("purge", "f_1", "--yes", "--full").returncode == 0
    conn.execute("CHECKPOINT")
    conn.commit()
    after = conn.execute("SELECT pg_relation_filepath('facts')").fetchone()
    assert after is not None and not (pg_data_dir / "pg" / after[0]).read_bytes().count(marker.encode())


@pytest.mark.anyio
async def test_purge_is_not_an_mcp_tool(project: Project) -> None:
    async with lore_session(project.env, cwd=project.dir) as s:
        names = {t.name for t in (await s.list_tools()).tools}
    assert names and not any("purge" in n or "export" in n or "import" in n for n in names)
