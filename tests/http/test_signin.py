"""Sign-in: every request to `/mcp` and `/api` needs a valid token; anything else is the same 401
with nothing in it; tokens are printed once, stored hashed, and never logged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx2
import psycopg
import pytest
from support.jsonrpc import MCP_HEADERS, initialize
from support.lorehttp import Server, bearer, mcp_session, push, run_lore, token, two_space_config
from support.mcpclient import ok

from lore.store import auth

pytestmark = pytest.mark.anyio
INITIALIZE = initialize("raw")


def bad_credentials(conn: psycopg.Connection) -> dict[str, dict[str, str]]:
    """Every way to be refused: nothing, garbage, an unknown token, an expired and a revoked one."""
    expired = token(conn, "alice", label="expired")
    conn.execute(
        "UPDATE tokens SET created_at = now() - interval '2 days', expires_at = now() - interval '1 day' "
        "WHERE hash = %s",
        (auth.digest(expired),),
    )
    revoked = token(conn, "alice", label="revoked")
    row = conn.execute("SELECT id FROM tokens WHERE hash = %s", (auth.digest(revoked),)).fetchone()
    assert row is not None
    auth.revoke(conn, row[0])
    conn.commit()
    return {
        "none": {},
        "garbage": {"Authorization": "Bearer not-a-token"},
        "unknown": {"Authorization": f"Bearer {auth.new_secret()}"},
        "expired": {"Authorization": f"Bearer {expired}"},
        "revoked": {"Authorization": f"Bearer {revoked}"},
        "basic": {"Authorization": "Basic YWxpY2U6cGFzcw=="},
        "bare scheme": {"Authorization": "Bearer"},
    }


def test_every_refusal_is_the_same_401_and_leaks_nothing(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    good = token(conn, "alice")
    push(conn, "alice", two_space_config(project))
    conn.execute(
        "INSERT INTO facts (lineage, space, statement, source) VALUES (1, 'alice/work', 'secret plan', 't')"
    )
    conn.commit()
    answers = set()
    for name, headers in bad_credentials(conn).items():
        for method, path, body in (
            ("POST", "/mcp", INITIALIZE),
            ("GET", f"/api/facts?workspace={project / 'work'}", None),
            ("GET", f"/api/session-start?workspace={project / 'work'}", None),
            ("GET", "/api/me", None),
            ("PUT", "/api/config", {"toml": "", "home": "/"}),
        ):
            r = httpx2.request(
                method, signed_in.url + path, headers={**MCP_HEADERS, **headers}, json=body, timeout=10
            )
            assert r.status_code == 401, (name, path, r.text)
            assert r.headers["www-authenticate"].startswith("Bearer "), (name, path)
            for secret in ("alice", "secret plan", "work", "expired", "revoked"):
                assert secret not in r.text and secret not in r.headers["www-authenticate"], (name, path)
            answers.add((r.text, r.headers["www-authenticate"]))
    assert len(answers) == 1, answers  # the same answer whatever was wrong, wherever
    me = httpx2.get(f"{signed_in.url}/api/me", headers=bearer(good), timeout=10)
    assert me.status_code == 200 and me.json() == {"user": "alice", "mode": "sign-in", "expires_at": None}
    assert httpx2.get(f"{signed_in.url}/healthz", timeout=10).status_code == 200  # no token needed


async def test_token_cli_prints_once_stores_a_hash_and_revokes_at_once(
    signed_in: Server, lore_env: dict[str, str], conn: psycopg.Connection, project: Path
) -> None:
    done = run_lore(lore_env, "token", "create", "alice", "--expires", "30d", "--label", "laptop")
    assert done.returncode == 0, done.stderr
    secret = done.stdout.strip()
    assert done.stdout.count("\n") == 1 and auth.looks_like_token(secret)  # stdout: the token alone
    assert "alice" in done.stderr and "shown once" in done.stderr and secret not in done.stderr

    rows = conn.execute("SELECT hash, t::text FROM tokens t").fetchall()
    assert len(rows) == 1 and bytes(rows[0][0]) == hashlib.sha256(secret.encode()).digest()
    assert secret not in rows[0][1] and secret[5:20] not in rows[0][1]

    listed = run_lore(lore_env, "token", "list")
    assert listed.returncode == 0 and secret not in listed.stdout
    assert "alice" in listed.stdout and "active" in listed.stdout and "laptop" in listed.stdout

    async with mcp_session(signed_in.url, bearer(secret, project / "work")) as s:
        await ok(s, "remember_fact", statement="signed in")
    token_id = listed.stdout.splitlines()[1].split()[0]
    revoked = run_lore(lore_env, "token", "revoke", token_id)
    assert revoked.returncode == 0 and "Revoked token" in revoked.stdout
    r = httpx2.post(f"{signed_in.url}/mcp", headers={**MCP_HEADERS, **bearer(secret)}, json=INITIALIZE)
    assert r.status_code == 401  # at once: every request checks the database
    assert "revoked" in run_lore(lore_env, "token", "list").stdout
    bad = run_lore(lore_env, "token", "create", "not/valid")
    assert bad.returncode == 1 and "invalid user name" in bad.stderr


def test_a_session_id_is_useless_with_another_users_token(
    signed_in: Server, conn: psycopg.Connection
) -> None:
    alice, bob = token(conn, "alice"), token(conn, "bob")
    with httpx2.Client(base_url=signed_in.url, timeout=10) as http:
        opened = http.post("/mcp", headers={**MCP_HEADERS, **bearer(alice)}, json=INITIALIZE)
        assert opened.status_code == 200, opened.text
        session_id = opened.headers["mcp-session-id"]
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        stolen = http.post(
            "/mcp", headers={**MCP_HEADERS, **bearer(bob), "mcp-session-id": session_id}, json=listing
        )
        assert stolen.status_code == 404 and "remember_fact" not in stolen.text


async def test_tokens_never_reach_the_logs(
    signed_in_process: Server,
    conn: psycopg.Connection,
    project: Path,
    lore_env: dict[str, str],
    tmp_path: Path,
) -> None:
    """The server runs at debug level; every secret used, good or bad, is then searched for."""
    good = token(conn, "alice")
    bad = bad_credentials(conn)
    push(conn, "alice", two_space_config(project))
    async with mcp_session(signed_in_process.url, bearer(good, project / "work")) as s:
        await ok(s, "remember_fact", statement="logged fact")
        await ok(s, "recall_facts")
    for headers in bad.values():
        httpx2.post(f"{signed_in_process.url}/mcp", headers={**MCP_HEADERS, **headers}, json=INITIALIZE)
        httpx2.get(f"{signed_in_process.url}/api/facts?workspace={project}", headers=headers)
    httpx2.get(f"{signed_in_process.url}/api/facts?workspace={project / 'work'}", headers=bearer(good))
    hook_env = {**lore_env, "LORE_URL": signed_in_process.url}
    for secret in (good, bad["unknown"]["Authorization"][7:]):
        payload = json.dumps({"cwd": str(project / "work"), "source": "startup"})
        run_lore({**hook_env, "LORE_TOKEN": secret}, "hook", "session-start", stdin=payload)
    logs = signed_in_process.logs()
    assert "logged fact" in logs  # debug logging really was on: message bodies are there
    hook_log = (Path(lore_env["LORE_DATA_DIR"]) / "logs" / "hook.log").read_text()
    secrets = [good] + [h["Authorization"].partition(" ")[2] for h in bad.values() if "Authorization" in h]
    for secret in (s for s in secrets if len(s) > 12):
        assert secret not in logs and secret not in hook_log
