"""lore through a connection pooler in transaction mode: Debian's PgBouncer, started here on
127.0.0.1 in front of the test's PostgreSQL (tests/support/infra.py). Every tool, the JSON API, the
web UI and the hooks work through it (nothing prepared server-side, no session state left on a
server connection); a reply reaches a waiting sender live when LISTEN has a direct URL of its own,
and by the poll within its bound when it has none; `lore doctor` and `/readyz` say when listening
would go through the pooler."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
import pytest
from support import cli
from support.infra import Bouncer, start_pgbouncer
from support.lorehttp import LORE, bearer, push, start_server, token, two_space_config
from support.mcpclient import lore_session, ok, text

from lore.core.session import Origin
from lore.db import health
from lore.mcp.tools import TOOLS
from lore.store import facts

pytestmark = pytest.mark.anyio


@pytest.fixture
def bouncer(db_url: str, conn: psycopg.Connection) -> Iterator[Bouncer]:
    pooler = start_pgbouncer(db_url, pool_size=2)
    try:
        yield pooler
    finally:
        pooler.stop()


def two_spaces(env: dict[str, str], tmp_path: Path) -> dict[str, Path]:
    """Spaces alpha and gamma (each accepts the other's tasks and messages), in the config file."""
    dirs = {name: tmp_path / name for name in ("alpha", "gamma")}
    for path in dirs.values():
        path.mkdir()
    Path(env["LORE_CONFIG"]).write_text(
        'default_space = "alpha"\n'
        f'[[space]]\nid = "alpha"\npaths = ["{dirs["alpha"]}"]\naccepts_from = ["gamma"]\n'
        f'[[space]]\nid = "gamma"\npaths = ["{dirs["gamma"]}"]\naccepts_from = ["alpha"]\n'
    )
    return dirs


def pooled(lore_env: dict[str, str], bouncer: Bouncer, **extra: str) -> dict[str, str]:
    return {**lore_env, "LORE_DATABASE_URL": bouncer.url, "LORE_DATABASE_POOLER": "transaction", **extra}


def test_the_pooler_is_in_transaction_mode(bouncer: Bouncer, db_url: str) -> None:
    """What breaks through it when nobody is told: a statement psycopg prepared on one server
    connection is missing (or already there) on the next, and LISTEN hears nothing."""
    first = psycopg.connect(bouncer.url, autocommit=True)
    holder = psycopg.connect(bouncer.url)
    broke: BaseException | None = None
    try:
        for i in range(6):  # psycopg prepares a statement on its 5th execution
            first.execute("SELECT %s::int", (i,))
        holder.execute("SELECT 1")  # holds a server connection in its transaction: the next goes elsewhere
        for i in range(6):
            first.execute("SELECT %s::int", (i,))
    except (psycopg.errors.DuplicatePreparedStatement, psycopg.errors.InvalidSqlStatementName) as exc:
        broke = exc
    finally:
        first.close()
        holder.close()
    assert broke is not None, "the pooler handed every statement to one server connection"
    with psycopg.connect(db_url, autocommit=True) as direct:
        assert health.listen_probe(bouncer.url, direct, timeout=1.0) is None
        assert health.listen_probe(db_url, direct, timeout=5.0) is not None


async def test_every_tool_through_the_pooler(
    lore_env: dict[str, str], db_url: str, tmp_path: Path, conn: psycopg.Connection
) -> None:
    """Two sessions at once, each calling every tool more often than psycopg's prepare threshold,
    through one server connection: a statement one client prepared there would collide with the
    other's (psycopg names them alike on every connection)."""
    one = start_pgbouncer(db_url, pool_size=1)
    try:
        # One pooled connection per process: each statement reaches psycopg's prepare threshold there.
        await _every_tool(pooled(lore_env, one, LORE_POOL_SIZE="1"), tmp_path, conn)
    finally:
        one.stop()


async def _every_tool(env: dict[str, str], tmp_path: Path, conn: psycopg.Connection) -> None:
    dirs = two_spaces(env, tmp_path)
    called: set[str] = set()

    async def work(here: str, there: str) -> None:
        async with lore_session(env, cwd=dirs[here], client=f"agent-{here}") as s:
            # The same read past the threshold, in a row, on each client: in the loop below alone one
            # of the two prepared nothing (counted on 2026-12-05: 0 statements on one, 30 on the
            # other), so there was nothing to collide and a pool that prepares passed.
            for _ in range(7):
                await ok(s, "recall_facts")
            facts, notes = [], []
            for i in range(6):
                facts.append((await ok(s, "remember_fact", statement=f"{here} fact {i}")).structured_content)
                notes.append(
                    (
                        await ok(
                            s, "remember_note", kind="pattern", title=f"{here} {i}", body=f"deploy {here} {i}"
                        )
                    ).structured_content
                )
                assert f"{here} fact {i}" in text(await ok(s, "recall_facts"))
                await ok(s, "search_notes", query=f"deploy {here}")
                await ok(s, "send_message", to=there, body=f"hello {i} from {here}")
                await ok(s, "read_messages")
            assert facts[0] is not None and notes[0] is not None and notes[1] is not None
            await ok(s, "revise_fact", id=facts[0]["id"], statement=f"{here} fact 0, revised")
            await ok(s, "forget", id=facts[1]["id"], reason="wrong")
            await ok(
                s, "link_notes", **{"from": notes[0]["id"], "relation": "relates_to", "to": notes[1]["id"]}
            )
            await ok(s, "mark_irrelevant", note_id=notes[2]["id"], query=f"deploy {here}")
            filed = (
                await ok(s, "file_task", title=f"from {here}", body="please", to=there)
            ).structured_content
            assert filed is not None
            mine = (await ok(s, "file_task", title=f"{here} own", body="mine")).structured_content
            assert mine is not None
            await ok(s, "update_task", id=mine["id"], status="doing")
            called.update(
                {"remember_fact", "remember_note", "recall_facts", "search_notes", "send_message"}
                | {"read_messages", "revise_fact", "forget", "link_notes", "mark_irrelevant"}
                | {"file_task", "update_task"}
            )

    with anyio.fail_after(120):
        async with anyio.create_task_group() as group:
            group.start_soon(work, "alpha", "gamma")
            group.start_soon(work, "gamma", "alpha")
    assert called == {tool.__name__ for tool in TOOLS}, "a tool is missing from this test"
    counts = conn.execute(
        "SELECT (SELECT count(DISTINCT lineage) FROM facts), (SELECT count(*) FROM messages), "
        "(SELECT count(*) FROM tasks), (SELECT count(*) FROM facts WHERE superseded_at IS NULL)"
    ).fetchone()
    assert counts == (12, 12, 4, 10), counts


def test_the_api_the_web_ui_and_the_hooks_through_the_pooler(
    lore_env: dict[str, str], db_url: str, tmp_path: Path, conn: psycopg.Connection, project: Path
) -> None:
    """One server connection behind the pooler: whatever a client leaves set on it (the hooks' psql
    once left its statement_timeout) would reach the next client."""
    one = start_pgbouncer(db_url, pool_size=1)
    try:
        env = pooled(lore_env, one)
        alice = token(conn, "alice")
        push(conn, "alice", two_space_config(project))
        with start_server(env, tmp_path / "serve.log", "--sign-in") as server:
            with httpx2.Client(
                base_url=server.url, headers=bearer(alice, project / "work"), timeout=20
            ) as api:
                for i in range(7):
                    made = api.post("/api/facts", json={"statement": f"through the pooler {i}"})
                    assert made.status_code == 201, made.text
                fact = made.json()["fact"]["id"]
                assert api.post(f"/api/facts/{fact}/revise", json={"statement": "revised"}).status_code == 200
                assert len(api.get("/api/facts").json()["facts"]) == 7
                start = api.get("/api/session-start", params={"client": "claude-code"})
                assert start.status_code == 200 and "revised" in start.json()["text"]
            with httpx2.Client(base_url=server.url, timeout=20) as browser:
                form = browser.get("/sign-in")
                csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
                assert csrf is not None
                signed = browser.post(
                    "/sign-in", data={"csrf": csrf.group(1), "token": alice, "next": "/facts"}
                )
                assert signed.status_code == 303, signed.text
                for page in ("/facts", "/notes", "/spaces", "/tasks", "/messages", "/log", f"/facts/{fact}"):
                    shown = browser.get(page)
                    assert shown.status_code == 200, (page, shown.text[:300])
                assert "revised" in browser.get("/facts").text
        hook_env = {**env, "LORE_CONFIG": str(tmp_path / "local.toml")}
        Path(hook_env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]]\nid = "personal"\n')
        facts.remember(conn, Origin("personal", "t", str(tmp_path)), "pooled hook fact")
        conn.commit()
        hooked = subprocess.run(
            [LORE, "hook", "session-start", "--client", "claude-code"],
            input=json.dumps({"cwd": str(tmp_path), "source": "startup", "session_id": "s1"}),
            env=hook_env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert "pooled hook fact" in hooked.stdout, (hooked.stdout, hooked.stderr)
        with psycopg.connect(one.url, autocommit=True, prepare_threshold=None) as through:
            left = through.execute("SHOW statement_timeout").fetchone()
        assert left == ("0",), f"the hook left statement_timeout = {left} on the pooler's server connection"
    finally:
        one.stop()


async def _ask_and_answer(env: dict[str, str], dirs: dict[str, Path], conn: psycopg.Connection) -> float:
    """alpha waits for a reply (30 s at most) while gamma answers: the seconds from the answer to
    the waiting call's return."""
    outcome: dict[str, Any] = {}
    async with (
        lore_session(env, cwd=dirs["alpha"], client="asker") as asker,
        lore_session(env, cwd=dirs["gamma"], client="answerer") as answerer,
    ):

        async def ask() -> None:
            outcome["result"] = await ok(
                asker, "send_message", to="gamma", body="which port?", wait_seconds=30
            )
            outcome["at"] = time.monotonic()

        with anyio.fail_after(45):
            async with anyio.create_task_group() as group:
                group.start_soon(ask)
                question = None
                while question is None:  # the test's own wait for the question to be sent
                    got = (await ok(answerer, "read_messages")).structured_content["messages"]
                    question = next((m for m in got if m["body"] == "which port?"), None)
                    if question is None:
                        await anyio.sleep(0.05)
                await anyio.sleep(0.3)  # the asker is waiting now, not checking the table
                outcome["listeners"] = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lore-listen'"
                ).fetchone()
                conn.commit()
                await ok(answerer, "send_message", to="alpha", body="8765", reply_to=question["id"])
                answered = time.monotonic()
    reply = outcome["result"].structured_content["reply"]
    assert reply is not None and reply["body"] == "8765", text(outcome["result"])
    env["_listeners"] = str(outcome["listeners"][0])
    return float(outcome["at"] - answered)


async def test_a_reply_arrives_live_with_listen_on_the_direct_url(
    lore_env: dict[str, str], bouncer: Bouncer, db_url: str, tmp_path: Path, conn: psycopg.Connection
) -> None:
    env = pooled(lore_env, bouncer, LORE_LISTEN_URL=db_url, LORE_POLL_SECONDS="30")
    took = await _ask_and_answer(env, two_spaces(env, tmp_path), conn)
    assert env["_listeners"] == "1"  # the asker's process listens, on the direct URL
    assert took < 5, f"the reply took {took:.1f} s: not pushed (the poll is every 30 s here)"


@pytest.mark.parametrize("how", ["pooled, no listen URL", "direct, LORE_LISTEN_URL=off"])
async def test_without_listen_the_poll_delivers_a_reply_within_its_bound(
    how: str, lore_env: dict[str, str], bouncer: Bouncer, tmp_path: Path, conn: psycopg.Connection
) -> None:
    if how.startswith("pooled"):
        env = pooled(lore_env, bouncer, LORE_POLL_SECONDS="1")
    else:
        env = {**lore_env, "LORE_LISTEN_URL": "off", "LORE_POLL_SECONDS": "1"}
    took = await _ask_and_answer(env, two_spaces(env, tmp_path), conn)
    assert env["_listeners"] == "0"  # nobody listens: the poll is all there is
    assert took < 1 + 3, f"the reply took {took:.1f} s with a poll every second"


def test_readyz_and_doctor_say_when_listening_would_go_through_the_pooler(
    lore_env: dict[str, str], bouncer: Bouncer, db_url: str, tmp_path: Path
) -> None:
    env = pooled(lore_env, bouncer)
    two_spaces(env, tmp_path)
    with start_server(env, tmp_path / "serve.log") as server:
        ready = httpx2.get(f"{server.url}/readyz", timeout=10)
    assert ready.status_code == 200, ready.text  # ready all the same: replies come with the poll
    body = ready.json()
    assert body["ok"] and "transaction pooler" in body["listen"]
    assert "LORE_LISTEN_URL" in body["warning"]

    said = cli.run("doctor", env=env).stdout
    assert re.search(r"^OK +through a transaction pooler \(LORE_DATABASE_POOLER", said, re.M), said
    assert re.search(r"^WARN +listening would go through a pooler .*LORE_LISTEN_URL", said, re.M), said
    assert re.search(r"^WARN +no statement_timeout through the pooler", said, re.M), said

    wrong = cli.run(
        "doctor", env={**env, "LORE_LISTEN_URL": bouncer.url, "LORE_DATABASE_POOLER": "auto"}
    ).stdout
    assert re.search(r"^FAIL +LISTEN heard nothing within 2 s .*LORE_LISTEN_URL", wrong, re.M), wrong

    right = cli.run("doctor", env={**env, "LORE_LISTEN_URL": db_url}).stdout
    assert re.search(r"^OK +LISTEN on LORE_LISTEN_URL .*: a notification arrived in", right, re.M), right
    assert "WARN listening" not in right


def test_the_deploy_docs_pgbouncer_recipe_for_the_embedded_database_pools_lore(
    db_url: str, conn: psycopg.Connection, tmp_path: Path
) -> None:
    """docs/deploy.md's pgbouncer.ini, with this test's socket, port and files put in, in front of the
    embedded PostgreSQL: PgBouncer runs as the database's OS user and lore's queries go through it."""
    import os
    import secrets
    import shutil
    from urllib.parse import parse_qs, urlsplit

    from support.infra import PGBOUNCER, _as_db_user, _private_dir, _wait_for, require, stop
    from support.lorehttp import free_port

    from lore.db import embedded

    require(PGBOUNCER)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "deploy.md").read_text()
    found = re.search(r"```ini\n(; /etc/lore/pgbouncer\.ini.*?)```", doc, re.S)
    assert found, "docs/deploy.md lost its PgBouncer recipe"
    assert "LORE_DATABASE_POOLER=transaction" in doc and "lore db url" in doc
    home, port, password = _private_dir("lore-doc-pgbouncer-"), free_port(), secrets.token_hex(12)
    socket_dir = parse_qs(urlsplit(db_url).query)["host"][0]
    ini = (
        found.group(1)
        .replace("/var/lib/lore/data/run", socket_dir)
        .replace("listen_port = 6432", f"listen_port = {port}")
        .replace("/etc/lore/pgbouncer-users.txt", f"{home}/users.txt")
        .replace("/var/log/lore/pgbouncer.log", f"{home}/pgbouncer.log")
    )
    (home / "pgbouncer.ini").write_text(ini)
    (home / "users.txt").write_text(f'"lore" "{password}"\n')
    for name in ("pgbouncer.ini", "users.txt"):
        os.chmod(home / name, 0o600)
        if os.geteuid() == 0:
            shutil.chown(home / name, user=embedded.OS_USER, group=embedded.OS_USER)
    proc = subprocess.Popen(
        [PGBOUNCER, str(home / "pgbouncer.ini")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd="/", **_as_db_user(),
    )  # fmt: skip
    try:
        assert _wait_for(home / "pgbouncer.log", rf"listening on 127\.0\.0\.1:{port}", proc, 10), (
            (home / "pgbouncer.log").read_text(errors="replace") if (home / "pgbouncer.log").exists() else ""
        )
        url = f"postgresql://lore:{password}@127.0.0.1:{port}/lore"
        with psycopg.connect(url, prepare_threshold=None) as pooled:
            assert pooled.execute("SELECT current_user, count(*) FROM facts").fetchone() == ("postgres", 0)
    finally:
        stop(proc)
        shutil.rmtree(home, ignore_errors=True)
