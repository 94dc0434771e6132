"""`lore login URL` / `lore logout`: a pasted token or the server's OAuth flow in a browser (a loopback
redirect), stored owner-only; every command, `lore install` and the header helper of the MCP entry
use it; `LORE_URL` / `LORE_TOKEN` still win, and a stored token never goes to another server."""

from __future__ import annotations

import json
import re
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, push, start_server, token, two_space_config
from support.machines import LORE, machine

from lore.core import login


def test_a_pasted_token_is_checked_then_stored_owner_only(
    tmp_path: Path, signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    laptop = machine(tmp_path, "laptop")
    wrong = laptop.lore("login", signed_in.url, "--with-token", stdin="lore_" + "x" * 43 + "\n")
    assert wrong.returncode == 1 and "Not signed in" in wrong.stderr and "Nothing was stored" in wrong.stderr
    assert not laptop.login_file.exists()
    secret = token(conn, "alice")
    done = laptop.lore("login", signed_in.url, "--with-token", stdin=secret + "\n")
    assert done.returncode == 0, done.stderr
    assert f"Signed in to {signed_in.url} as alice" in done.stdout
    assert secret not in done.stdout + done.stderr
    assert stat.S_IMODE(laptop.login_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(laptop.login_file.parent.stat().st_mode) == 0o700
    assert "as alice, stored by `lore login`" in laptop.ok("login")

    # `lore config push` needs no environment either
    config = tmp_path / "config.toml"
    config.write_text(two_space_config(project))
    assert "Pushed" in laptop.ok("config", "push", str(config))
    assert laptop.ok("which", str(project / "work")).startswith("alice/work")
    assert "its tokens" not in (out := laptop.ok("logout")) and "Signed out of" in out
    assert not laptop.login_file.exists() and "Not signed in" in laptop.ok("login")
    assert secret not in signed_in.logs()


def test_the_environment_wins_and_a_stored_token_goes_to_its_own_server_only(
    tmp_path: Path, signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    for user in ("alice", "bob"):
        push(conn, user, two_space_config(project))
    laptop = machine(tmp_path, "laptop")
    alice, bob = token(conn, "alice"), token(conn, "bob")
    laptop.login(signed_in.url, alice)
    as_alice = laptop.lore("facts", "add", "written with the login", cwd=project / "work")
    assert "alice/work" in as_alice.stdout
    done = laptop.program(
        "facts", "add", "bob's", "--workspace", str(project / "work"), env={"LORE_TOKEN": bob}
    )
    assert done.returncode == 0 and "bob/work" in done.stdout, done.stderr
    with _recorder() as (url, seen):
        other = laptop.program("facts", "list", env={"LORE_URL": url})
        assert other.returncode == 1 and "refused" in other.stderr
        assert seen and all(h.get("Authorization") is None for h in seen), seen  # alice's token stayed home
        hooked = laptop.program(
            "hook", "session-start", stdin=json.dumps({"cwd": str(project / "work")}), env={"LORE_URL": url}
        )
        assert hooked.returncode == 0 and all(h.get("Authorization") is None for h in seen)
    assert laptop.untouched()


@contextmanager
def _recorder() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A server that answers 401 to everything and records each request's headers."""
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            seen.append(dict(self.headers.items()))
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"error": "invalid_token"}')

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def oauth_server(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    with start_server(lore_env, tmp_path / "oauth.log", "--oauth") as server:
        yield server


def test_browser_sign_in_keeps_only_oauth_tokens_refreshes_them_and_logout_revokes(
    tmp_path: Path, oauth_server: Server, conn: psycopg.Connection, project: Path
) -> None:
    push(conn, "alice", two_space_config(project))
    personal = token(conn, "alice")
    laptop = machine(tmp_path, "laptop")
    proc = subprocess.Popen(
        [LORE, "login", oauth_server.url, "--browser", "--no-open"],
        env=laptop.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        link = ""
        while not link:
            line = proc.stderr.readline()
            assert line, "lore login printed no sign-in link"
            link = line.strip() if line.strip().startswith("http") else ""
        _browser(link, personal)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"Signed in to {oauth_server.url} as alice" in out
    stored = login.read(laptop.env)
    assert stored is not None and stored.kind == "oauth" and stored.refresh_token
    assert personal not in laptop.login_file.read_text()  # the personal token never reaches the machine
    assert "alice/work" in laptop.ok("facts", "add", "signed in through a browser", cwd=project / "work")

    # An access token that ran out is renewed (the refresh token rotates) and stored again.
    login.write(laptop.env, login.Login(**{**stored.__dict__, "expires_at": 0.0}))
    assert "signed in through a browser" in laptop.ok("facts", "list", cwd=project / "work")
    renewed = login.read(laptop.env)
    assert (
        renewed is not None
        and renewed.token != stored.token
        and renewed.refresh_token != stored.refresh_token
    )
    assert "its tokens revoked on the server" in laptop.ok("logout")
    live = conn.execute("SELECT count(*) FROM tokens WHERE kind <> 'personal' AND revoked_at IS NULL")
    assert live.fetchone() == (0,)
    for secret in (personal, stored.token, renewed.token):
        assert secret not in oauth_server.logs()


def _browser(link: str, personal: str) -> None:
    """What the person does: open the link, paste the personal token, let the page send them back."""
    with httpx2.Client(timeout=30) as web:
        page = web.get(link, follow_redirects=True)
        assert page.status_code == 200 and "127.0.0.1" in page.text, page.text
        request = re.search(r"name='request' value='([^']+)'", page.text)
        assert request is not None
        signed = web.post(str(page.url), data={"request": request[1], "token": personal})
        assert signed.status_code == 302, signed.text
        back = web.get(signed.headers["location"])
        assert back.status_code == 200 and "Signed in" in back.text


def test_install_after_login_wires_the_server_and_writes_no_token(
    tmp_path: Path, signed_in: Server, conn: psycopg.Connection
) -> None:
    laptop = machine(tmp_path, "laptop")
    secret = token(conn, "alice")
    laptop.ok("install", "claude-code")  # before signing in: the local `lore mcp`
    laptop.login(signed_in.url, secret)
    stale = laptop.lore("doctor")
    assert "its MCP server is the local `lore mcp`" in stale.stdout, stale.stdout
    assert "Signed in (`lore login`)" in laptop.ok("install", "claude-code")
    entry = json.loads((laptop.home / ".claude.json").read_text())["mcpServers"]["lore"]
    assert entry["type"] == "http" and entry["url"] == f"{signed_in.url}/mcp"
    assert entry["headersHelper"].endswith(" mcp-headers") and "Authorization" not in entry["headers"]
    settings = (laptop.home / ".claude" / "settings.json").read_text()
    assert "LORE_URL=" not in settings and "hook session-start" in settings  # the hook reads the login
    for written in (laptop.home / ".claude.json", laptop.home / ".claude" / "settings.json"):
        assert secret not in written.read_text()
    helper = laptop.program("mcp-headers")
    assert json.loads(helper.stdout) == {"Authorization": f"Bearer {secret}"}
    refused = laptop.lore("install", "codex")
    assert refused.returncode == 1 and "cannot be wired to a server yet" in refused.stderr
    assert "lore logout" in refused.stderr and not (laptop.home / ".codex").exists()


def test_a_hook_past_its_deadline_never_loses_a_renewed_oauth_pair(tmp_path: Path) -> None:
    """The server spends the old refresh token when it answers: a hook whose deadline comes while
    the renewal is in flight still stores the new pair (the deadline waits for it), else the machine
    would have to sign in again."""
    new_token = "lore_" + "n" * 43
    served: list[str] = []

    class TokenEndpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            served.append(self.path)
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.path == "/token":
                time.sleep(0.6)  # longer than the hook's 0.2 s deadline
                body = {"access_token": new_token, "refresh_token": "r2", "expires_in": 3600}
                self.send_response(200)
            else:
                body = {"error": "invalid_token"}
                self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        def log_message(self, *args: Any) -> None:
            return

    server = HTTPServer(("127.0.0.1", 0), TokenEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        laptop = machine(tmp_path, "laptop")
        login.write(
            laptop.env,
            login.Login(url, "alice", "lore_" + "o" * 43, kind="oauth", refresh_token="r1",
                        expires_at=0.0, client_id="c", token_endpoint=f"{url}/token"),
        )  # fmt: skip
        done = laptop.program(
            "hook",
            "session-start",
            stdin=json.dumps({"cwd": str(tmp_path)}),
            env={"LORE_HOOK_DEADLINE": "0.2"},
        )
        assert done.returncode == 0, done.stderr
        renewed = login.read(laptop.env)
        assert renewed is not None and (renewed.token, renewed.refresh_token) == (new_token, "r2"), served
        assert stat.S_IMODE(laptop.login_file.stat().st_mode) == 0o600
    finally:
        server.shutdown()
        server.server_close()
