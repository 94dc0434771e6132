"""The hosted session start: `LORE_URL` + `LORE_TOKEN` make `lore hook session-start` ask the server
(`POST /api/hooks/session-start`, the same use case as the local hook), with the local hook's rules:
the client's shape, the deadline, one line the agent reads (and a hook log line) on any failure, the
last text this workspace was shown when the server cannot answer, nothing heavy imported."""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import httpx2
import psycopg
from support import envelope
from support.lorehttp import Server, push, run_lore, start_server, token
from unit.test_hook_imports import HEAVY, hook_imports

from lore.store import auth


def hook(env: dict[str, str], cwd: Path, client: str = "claude-code") -> tuple[str, float]:
    started = time.monotonic()
    payload = json.dumps({"cwd": str(cwd), "source": "startup", "hook_event_name": "SessionStart"})
    done = run_lore(env, "hook", "session-start", "--client", client, stdin=payload)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout, time.monotonic() - started


def last_log(env: dict[str, str]) -> dict[str, object]:
    lines = (Path(env["LORE_DATA_DIR"]) / "logs" / "hook.log").read_text().splitlines()
    return dict(json.loads(lines[-1]))


def test_hosted_hook_prints_the_servers_text_in_each_clients_shape(
    signed_in: Server, conn: psycopg.Connection, lore_env: dict[str, str], project: Path
) -> None:
    secret = token(conn, "alice")
    push(conn, "alice", f'[[space]]\nid = "work"\npaths = ["{project}/work"]\n')
    conn.execute(
        "INSERT INTO facts (lineage, space, statement, source) VALUES (1, 'alice/work', 'ship it', 't')"
    )
    conn.commit()
    # No local config at all: in hosted mode the server has the user's config.
    env = {**lore_env, "LORE_URL": signed_in.url + "/", "LORE_TOKEN": secret, "LORE_CONFIG": "/nonexistent"}
    out, _ = hook(env, project / "work")
    context = json.loads(out)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert envelope.opens(context["additionalContext"], "alice/work")
    assert "- ship it [f_1 · " in context["additionalContext"]
    entry = last_log(env)
    assert entry["ok"] is True and "alice/work" in str(entry["detail"])
    cursor, _ = hook(env, project / "work", client="cursor")
    assert "ship it" in json.loads(cursor)["additional_context"]


def told(out: str) -> str:
    text: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return text


def test_a_failing_hosted_hook_tells_the_agent_why_in_one_line_and_logs_it(
    signed_in: Server, conn: psycopg.Connection, lore_env: dict[str, str], project: Path
) -> None:
    wrong = auth.new_secret()
    env = {**lore_env, "LORE_URL": signed_in.url, "LORE_TOKEN": wrong}
    out, _ = hook(env, project / "work")
    assert (
        told(out).startswith("lore: the shared memory is unavailable") and "refused LORE_TOKEN (401)" in out
    )
    entry = last_log(env)
    assert entry["ok"] is False and "refused LORE_TOKEN (401)" in str(entry["detail"])
    assert wrong not in json.dumps(entry) and wrong not in out

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    out, _ = hook({**env, "LORE_URL": f"http://127.0.0.1:{port}"}, project / "work")
    assert "cannot reach the server" in told(out) and "cannot reach the server" in str(
        last_log(env)["detail"]
    )

    with socket.socket() as silent:  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        # the default deadline, which lore_env raises for the other hook runs
        out, took = hook({**env, "LORE_URL": url, "LORE_HOOK_DEADLINE": "0.9"}, project / "work")
    # Wall clock is process start-up + the hook's 0.9 s budget, and start-up varies with the load on
    # this 2-core machine shared with parallel test runs. So the wall-clock bound is the one that
    # matters to the user (Claude Code kills a hook at 5 s); that the hook's own budget (under 1 s)
    # ended the wait is what its log line says.
    assert told(out).startswith("lore: the shared memory is unavailable") and took < 4.5
    detail = str(last_log(env)["detail"])
    assert "0.9 s deadline" in detail or re.search(r"did not answer within 0\.\d+s", detail), detail


def test_a_server_that_cannot_answer_gives_the_last_text_this_workspace_was_shown(
    conn: psycopg.Connection, lore_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    secret = token(conn, "alice")
    push(conn, "alice", f'[[space]]\nid = "work"\npaths = ["{project}/work"]\n')
    conn.execute(
        "INSERT INTO facts (lineage, space, statement, source) VALUES (1, 'alice/work', 'KEPT-FACT', 't')"
    )
    conn.commit()
    server = start_server(lore_env, tmp_path / "serve.log", "--sign-in", process=True)
    try:
        env = {**lore_env, "LORE_URL": server.url, "LORE_TOKEN": secret, "LORE_CONFIG": "/nonexistent"}
        first, _ = hook(env, project / "work")
        assert "KEPT-FACT" in told(first)
    finally:
        server.stop()  # the same server, gone
    out, _ = hook(env, project / "work")
    text = told(out)
    head, rest = text.split("\n", 1)
    assert head.startswith("lore: the shared memory cannot be read right now (the lore server did not answer")
    assert "was shown " in head and " ago, kept on this machine" in head
    assert rest == told(first)  # the whole text, as it was shown
    elsewhere, _ = hook(env, project / "other")
    assert "KEPT-FACT" not in elsewhere  # another workspace never gets this one's text
    with socket.socket() as closed:  # another server is another memory: not this one's text either
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    other, _ = hook({**env, "LORE_URL": f"http://127.0.0.1:{port}"}, project / "work")
    assert "KEPT-FACT" not in other and told(other).startswith("lore: the shared memory is unavailable")


def test_hosted_hook_imports_nothing_heavy(
    signed_in: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    secret = token(conn, "alice")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LORE_DATA_DIR": str(tmp_path / "data"),
        "LORE_URL": signed_in.url,
        "LORE_TOKEN": secret,
    }
    done, modules = hook_imports(env, json.dumps({"cwd": str(tmp_path), "source": "startup"}))
    assert done.returncode == 0
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
    log = (tmp_path / "data" / "logs" / "hook.log").read_text()
    assert '"ok": true' in log and "personal" in log  # it really went to the server


def test_what_a_hosted_hook_could_not_record_reaches_the_server_later(
    signed_in: Server, conn: psycopg.Connection, lore_env: dict[str, str], project: Path
) -> None:
    """The hook that was refused (a wrong token) keeps its record for the server; the next hook that
    gets through sends it (POST /api/hooks/replay), once, under the signed-in user, and `/api/log`
    lists it for that user only."""
    secret = token(conn, "alice")
    bob = token(conn, "bob")
    push(conn, "alice", f'[[space]]\nid = "work"\npaths = ["{project}/work"]\n')
    env = {**lore_env, "LORE_URL": signed_in.url, "LORE_CONFIG": "/nonexistent"}
    refused, _ = hook({**env, "LORE_TOKEN": auth.new_secret()}, project / "work")
    assert "refused LORE_TOKEN (401)" in refused
    hook({**env, "LORE_TOKEN": secret}, project / "work")
    hook({**env, "LORE_TOKEN": secret}, project / "work")  # a second success sends nothing again
    rows = conn.execute(
        "SELECT outcome, owner, space, via FROM injections WHERE outcome = 'unavailable'"
    ).fetchall()
    assert rows == [("unavailable", "alice", None, "hook")]
    theirs = httpx2.get(f"{signed_in.url}/api/log", headers={"Authorization": f"Bearer {bob}"}).json()
    ours = httpx2.get(f"{signed_in.url}/api/log", headers={"Authorization": f"Bearer {secret}"}).json()
    assert [r["outcome"] for r in ours["records"]].count("unavailable") == 1
    assert all(r["outcome"] != "unavailable" for r in theirs["records"])
