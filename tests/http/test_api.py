"""The JSON API: the server-rendered session-start text, config push (over HTTP and as an admin),
and local mode (no sign-in, loopback only, no DNS rebinding)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import (
    Server,
    bearer,
    mcp_session,
    push,
    run_lore,
    start_server,
    token,
)
from support.mcpclient import ok

from lore import render

pytestmark = pytest.mark.anyio


def test_session_start_is_the_servers_renderer_within_budget(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    secret = token(conn, "alice")
    push(
        conn,
        "alice",
        f'[[space]]\nid = "work"\npaths = ["{project}/work"]\n[session_start]\nmax_chars = 600\n',
    )
    with httpx2.Client(base_url=signed_in.url, headers=bearer(secret, project / "work"), timeout=10) as api:
        empty = api.get("/api/session-start").json()
        assert empty["text"] == "" and empty["space"] == "alice/work"
        for i in range(30):
            subject = "work" if i == 3 else None
            assert (
                api.post("/api/facts", json={"statement": f"fact number {i}", "subject": subject}).status_code
                == 201
            )
        got = api.get("/api/session-start", params={"client": "claude-code"}).json()
        text = got["text"]
        assert text.startswith('<lore-memory space="alice/work">') and render.size(text) <= 600
        assert "fact number 3 [" in text.splitlines()[2]  # about this workspace: first
        assert text.endswith(f"{got['omitted']} more facts in lore; call recall_facts to see them")
        assert got["shown"] + got["omitted"] == got["total"] == 30
        bad = api.get("/api/session-start", params={"client": "nope"})
        assert bad.status_code == 400 and "claude-code" in bad.json()["hint"]
        none = httpx2.get(f"{signed_in.url}/api/session-start", headers=bearer(secret), timeout=10)
        assert none.status_code == 400 and "workspace" in none.json()["error"]


async def test_config_push_over_http_then_used_by_mcp_sessions(
    signed_in: Server, conn: psycopg.Connection, lore_env: dict[str, str], tmp_path: Path
) -> None:
    secret = token(conn, "alice")
    home = Path(lore_env["HOME"])
    (home / "codes" / "acme-api").mkdir(parents=True)
    config = tmp_path / "mine.toml"
    config.write_text(
        'default_space = "personal"\n[[space]]\nid = "personal"\n'
        '[[space]]\nid = "acme"\npaths = ["~/codes/acme-*"]\nreads_from = ["personal"]\n'
        '[database]\nurl = "postgresql://local/only"\n'
    )
    env = {**lore_env, "LORE_URL": signed_in.url, "LORE_TOKEN": secret}
    done = run_lore(env, "config", "push", str(config))
    assert done.returncode == 0, done.stderr
    assert "for alice (version 1): spaces personal, acme" in done.stdout and "[database]" in done.stderr
    async with mcp_session(signed_in.url, bearer(secret, home / "codes" / "acme-api")) as s:
        assert (await ok(s, "remember_fact", statement="x")).structured_content["space"] == "alice/acme"

    config.write_text('[[space]]\nid = "acme"\nreads_from = ["ghost"]\n')
    broken = run_lore(env, "config", "push", str(config))
    assert broken.returncode == 1 and f"{config}:3" in broken.stderr and "ghost" in broken.stderr
    assert conn.execute("SELECT version FROM user_configs").fetchone() == (1,)  # nothing pushed
    config.write_text('default_space = "solo"\n[[space]]\nid = "solo"\n')
    refused = run_lore({**env, "LORE_TOKEN": "lore_" + "x" * 43}, "config", "push", str(config))
    assert refused.returncode == 1 and "401" in refused.stderr
    missing = run_lore({**lore_env}, "config", "push", str(config))
    assert missing.returncode == 1 and "LORE_URL" in missing.stderr
    admin = run_lore(lore_env, "config", "push", str(config), "--user", "dave")
    assert admin.returncode == 0 and "for dave (version 1): spaces solo" in admin.stdout
    assert conn.execute("SELECT user_name FROM user_configs ORDER BY 1").fetchall() == [("alice",), ("dave",)]


def test_local_mode_needs_no_token_and_answers_only_loopback(
    lore_env: dict[str, str], tmp_path: Path
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "solo"\npaths = ["{work}"]\n')
    server = start_server(lore_env, tmp_path / "local.log")
    try:
        with httpx2.Client(base_url=server.url, timeout=10) as api:
            assert api.get("/api/me").json() == {"user": None, "mode": "local"}
            written = api.post("/api/facts", json={"statement": "local fact", "workspace": str(work)})
            assert written.status_code == 201 and written.json()["fact"]["space"] == "solo"
            start = api.get("/api/session-start", params={"workspace": str(work)}).json()
            assert "local fact" in start["text"] and start["space"] == "solo"
            rebound = api.get("/api/facts", params={"workspace": str(work)}, headers={"Host": "evil.example"})
            assert rebound.status_code == 403 and "local fact" not in rebound.text
            push = api.put("/api/config", json={"toml": "", "home": "/"})
            assert push.status_code == 403 and "sign-in" in push.json()["hint"]
            assert api.get("/readyz").json()["ok"] is True
    finally:
        server.stop()


def test_readyz_says_when_the_database_is_away(lore_env: dict[str, str], tmp_path: Path) -> None:
    env = {**lore_env, "LORE_DATABASE_URL": "postgresql://lore@127.0.0.1:1/lore?connect_timeout=2"}
    server = start_server(env, tmp_path / "away.log", "--sign-in", ready="/healthz")
    try:
        ready = httpx2.get(f"{server.url}/readyz", timeout=20)
        assert ready.status_code == 503 and ready.json()["ok"] is False
        assert "connect" in ready.json()["error"].lower()
    finally:
        server.stop()
