"""Backup and restore of a live lore database with PostgreSQL's own tools (docs/deploy.md, Backups):
`pg_dump -Fc --no-owner` while a writer keeps writing, `pg_restore --no-owner` into a fresh
database, then every tool answers on the copy, and the copy holds exactly what was committed when
the dump began (one transaction a step writes a fact, a note, a task and a message: the four
counts match each other and the source's first rows, with no gap)."""

from __future__ import annotations

import subprocess
import threading
import time
from pathlib import Path

import anyio
import psycopg
import pytest
from support.mcpclient import lore_session, ok

from lore.core.config import load_config
from lore.core.session import Origin
from lore.db import embedded
from lore.mcp.tools import TOOLS
from lore.store import facts, messages, notes, tasks

pytestmark = pytest.mark.anyio
COPY = "lore_restored"


def _write(url: str, config_path: str, work: Path, stop: threading.Event, done: list[int]) -> None:
    config = load_config({"LORE_CONFIG": config_path})
    origin = Origin("alpha", "writer", str(work))
    with psycopg.connect(url, autocommit=True) as conn:
        i = 0
        while not stop.is_set():
            with conn.transaction():
                facts.remember(conn, origin, f"fact {i}")
                notes.remember(conn, origin, f"note {i} about backups", kind="pattern")
                tasks.file(conn, config, origin, "gamma", f"task {i}", "restore drill")
                messages.send(conn, config, origin, "gamma", f"message {i}")
            i += 1
            done.append(i)


async def test_a_dump_taken_while_writing_restores_whole_and_every_tool_answers(
    db_url: str, lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection
) -> None:
    dirs = {name: tmp_path / name for name in ("alpha", "gamma")}
    for path in dirs.values():
        path.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(
        'default_space = "alpha"\n'
        f'[[space]]\nid = "alpha"\npaths = ["{dirs["alpha"]}"]\naccepts_from = ["gamma"]\n'
        f'[[space]]\nid = "gamma"\npaths = ["{dirs["gamma"]}"]\naccepts_from = ["alpha"]\n'
    )
    stop, done = threading.Event(), []
    writer = threading.Thread(
        target=_write, args=(db_url, lore_env["LORE_CONFIG"], dirs["alpha"], stop, done)
    )
    writer.start()
    dump = tmp_path / "lore.dump"
    try:
        while len(done) < 30:  # the writer is well under way
            time.sleep(0.01)
        before = len(done)
        subprocess.run(
            [str(embedded.bin_dir() / "pg_dump"), "-Fc", "--no-owner", "-f", str(dump), "-d", db_url],
            check=True,
            capture_output=True,
            timeout=60,
        )
        during = len(done) - before
        time.sleep(0.2)  # and it went on writing after the dump's snapshot
    finally:
        stop.set()
        writer.join(30)
    assert during > 0, "nothing was written while pg_dump ran"

    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {COPY} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {COPY}")
    copy_url = db_url.replace("/lore?", f"/{COPY}?")
    try:
        restored = subprocess.run(
            [str(embedded.bin_dir() / "pg_restore"), "--no-owner", "-d", copy_url, str(dump)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert restored.returncode == 0, restored.stderr
        with psycopg.connect(copy_url) as copy:
            counts = copy.execute(
                "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM notes WHERE kind = 'pattern'), "
                "(SELECT count(*) FROM tasks), (SELECT count(*) FROM messages)"
            ).fetchone()
            assert counts is not None and len(set(counts)) == 1, counts  # one transaction a step
            (kept,) = {int(n) for n in counts}
            statements = {s for (s,) in copy.execute("SELECT statement FROM facts")}
        assert statements == {f"fact {i}" for i in range(kept)}  # a prefix: nothing half, no gap
        total = conn.execute("SELECT count(*) FROM facts").fetchone()
        assert total is not None and before <= kept < total[0]  # began after 30 steps, before the end
        source = conn.execute(
            "SELECT body FROM messages WHERE body = ANY(%s) ORDER BY id",
            ([f"message {i}" for i in range(kept)],),
        ).fetchall()
        assert len(source) == kept

        env = {**lore_env, "LORE_DATABASE_URL": copy_url, "LORE_EMBEDDER": "fake"}
        called: set[str] = set()

        async def use(tool: str, **args: object) -> dict[str, object]:
            called.add(tool)
            result = await ok(s, tool, **args)
            return result.structured_content or {}

        with anyio.fail_after(60):
            async with lore_session(env, cwd=dirs["alpha"], client="after-restore") as s:
                fact = await use("remember_fact", statement="written after the restore")
                assert int(str(fact["id"])[2:]) > kept  # the sequences came back too
                await use("recall_facts")
                await use("revise_fact", id="f_1", statement="fact 0, revised after the restore")
                await use("forget", id="f_2", reason="restore drill")
                note = await use("remember_note", kind="decision", body="restores are tested")
                found = await use("search_notes", query="backups")
                assert found["results"], found
                await use("link_notes", **{"from": note["id"], "relation": "relates_to", "to": "n_1"})
                await use("mark_irrelevant", note_id="n_3", query="backups")  # (n_2: a task)
                own = await use("file_task", title="check the restore", body="again next month")
                await use("update_task", id=own["id"], status="doing")
                await use("send_message", to="gamma", body="restored")
                await use("read_messages")
        assert called == {tool.__name__ for tool in TOOLS}, "a tool is missing from this test"
    finally:
        with psycopg.connect(db_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {COPY} WITH (FORCE)")
