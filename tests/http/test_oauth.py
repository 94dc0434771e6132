"""The MCP spec's authorization flow against `lore serve --oauth`, driven by the SDK's own OAuth
client: discovery, dynamic registration, PKCE, the sign-in page (a personal token pasted into it),
the code exchange, a session as that user; the OAuth tokens die with the personal token."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import psycopg
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from support.lorehttp import Server, run_lore, start_server, token
from support.mcpclient import ok

from lore.store import auth

pytestmark = pytest.mark.anyio
REDIRECT = "http://127.0.0.1:9/callback"  # never contacted: the test reads the redirect itself


class Memory:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """What the user does in the browser: open the link, paste the personal token, submit."""

    def __init__(self, personal: str) -> None:
        self.personal = personal
        self.result: AuthorizationCodeResult | None = None
        self.pages: list[str] = []

    async def redirect(self, url: str) -> None:
        async with httpx2.AsyncClient(timeout=10) as web:
            page = await web.get(url, follow_redirects=True)
            assert page.status_code == 200, page.text
            self.pages.append(page.text)
            found = re.search(r"name='request' value='([^']+)'", page.text)
            assert found is not None
            wrong = await web.post(str(page.url), data={"request": found[1], "token": auth.new_secret()})
            assert wrong.status_code == 401 and "not valid" in wrong.text
            signed = await web.post(str(page.url), data={"request": found[1], "token": self.personal})
            assert signed.status_code == 302, signed.text
            query = parse_qs(urlparse(signed.headers["location"]).query)
            assert signed.headers["location"].startswith(REDIRECT)
            self.result = AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])

    async def callback(self) -> AuthorizationCodeResult:
        assert self.result is not None
        return self.result


@pytest.fixture
def oauth_server(lore_env: dict[str, str], tmp_path: Path) -> Iterator[Server]:
    with start_server(
        lore_env, tmp_path / "oauth.log", "--oauth", "--log-level", "debug", process=True
    ) as server:
        yield server


async def test_oauth_flow_signs_in_as_the_tokens_user(
    oauth_server: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    personal = token(conn, "alice")
    browser, storage = Browser(personal), Memory()
    provider = OAuthClientProvider(
        server_url=f"{oauth_server.url}/mcp",
        client_metadata=OAuthClientMetadata(client_name="Test Agent", redirect_uris=[REDIRECT]),  # type: ignore[list-item]
        storage=storage,
        redirect_handler=browser.redirect,
        callback_handler=browser.callback,
    )
    async with (
        httpx2.AsyncClient(auth=provider, headers={"X-Lore-Workspace": str(tmp_path)}, timeout=30) as http,
        streamable_http_client(f"{oauth_server.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        done = await ok(session, "remember_fact", statement="via oauth")
        assert done.structured_content["space"] == "alice/personal"
    assert "Test Agent" in browser.pages[0]
    assert storage.tokens is not None and storage.tokens.refresh_token
    access = storage.tokens.access_token
    assert access != personal
    kinds = conn.execute("SELECT kind, client_id IS NOT NULL FROM tokens ORDER BY id").fetchall()
    assert kinds == [("personal", False), ("refresh", True), ("access", True)]

    assert storage.client is not None
    form = {"grant_type": "refresh_token", "refresh_token": storage.tokens.refresh_token}
    form["client_id"] = str(storage.client.client_id)
    if storage.client.client_secret:
        form["client_secret"] = storage.client.client_secret
    refreshed = httpx2.post(f"{oauth_server.url}/token", data=form)
    assert refreshed.status_code == 200, refreshed.text
    again = httpx2.post(f"{oauth_server.url}/token", data=form)  # rotated: the old one is spent
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    old = {"Authorization": f"Bearer {access}"}
    assert httpx2.get(f"{oauth_server.url}/api/me", headers=old).status_code == 401  # went with its refresh
    access = refreshed.json()["access_token"]
    headers = {"Authorization": f"Bearer {access}"}
    assert httpx2.get(f"{oauth_server.url}/api/me", headers=headers).json()["user"] == "alice"
    row = conn.execute("SELECT id FROM tokens WHERE kind = 'personal'").fetchone()
    assert row is not None
    auth.revoke(conn, row[0])  # `lore token revoke`: everything issued from it dies too
    conn.commit()
    assert httpx2.get(f"{oauth_server.url}/api/me", headers=headers).status_code == 401
    logs = oauth_server.logs()
    for secret in (personal, access, storage.tokens.access_token, storage.tokens.refresh_token):
        assert secret not in logs
    unauthorized = httpx2.post(f"{oauth_server.url}/mcp", json={})
    assert unauthorized.status_code == 401
    assert "resource_metadata=" in unauthorized.headers["www-authenticate"]  # how clients discover OAuth


def test_oauth_refuses_a_plain_http_public_url(lore_env: dict[str, str]) -> None:
    done = run_lore(lore_env, "serve", "--oauth", "--public-url", "http://lore.example.com", "--port", "9")
    assert done.returncode == 1 and "HTTPS" in done.stderr and "--public-url" in done.stderr


def _register(server: Server, **metadata: object) -> httpx2.Response:
    body = {"client_name": "Agent", "redirect_uris": [REDIRECT], **metadata}
    return httpx2.post(f"{server.url}/register", json=body, timeout=10)


REFUSED_REDIRECTS = [
    "javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "file:///etc/passwd",
    "http://evil.example/cb",
    "http://127.0.0.1.evil.example/cb",
    "myapp://callback",
    "ftp://files.example/cb",
    "https://ok.example/cb#frag",
]
TAKEN_REDIRECTS = [
    "https://agent.example/cb",
    "http://127.0.0.1:33418/cb",
    "http://localhost/cb",
    "http://[::1]:9/cb",
]


def test_registration_refuses_a_redirect_that_is_not_https_or_loopback(
    oauth_server: Server, conn: psycopg.Connection
) -> None:
    """One server for all the cases (starting one costs more than the cases together), fewer cases
    than the 10 registrations a minute an address may make."""
    for uri in REFUSED_REDIRECTS:
        refused = _register(oauth_server, redirect_uris=[REDIRECT, uri])
        assert refused.status_code == 400, (uri, refused.text)
        assert refused.json()["error"] == "invalid_redirect_uri", uri
    assert conn.execute("SELECT count(*) FROM oauth_clients").fetchone() == (0,)


def test_registration_takes_https_and_loopback_redirects(oauth_server: Server) -> None:
    for uri in TAKEN_REDIRECTS:
        taken = _register(oauth_server, redirect_uris=[uri])
        assert taken.status_code == 201, (uri, taken.text)


def test_registration_is_bounded_in_size_and_rate(
    oauth_server: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    huge = _register(oauth_server, client_name="x" * (1024 * 1024))
    assert huge.status_code == 413, huge.text

    # No Content-Length: the cap must hold while the body streams (Trust round 3, item 7: a 500 and a
    # traceback in the log). curl, as the finding was made: `Transfer-Encoding: chunked`.
    body = tmp_path / "register.json"
    body.write_text('{"client_name": "' + "x" * 40_000 + '", "redirect_uris": ["https://a.example/cb"]}')
    streamed = subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Transfer-Encoding: chunked",
         "-H", "Content-Type: application/json", "--data-binary", f"@{body}", f"{oauth_server.url}/register"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert streamed.stdout == "413", streamed
    assert "Traceback" not in oauth_server.logs()
    long_name = _register(oauth_server, client_name="x" * 101)
    assert long_name.status_code == 400 and long_name.json()["error"] == "invalid_client_metadata"
    answers = [_register(oauth_server).status_code for _ in range(15)]
    assert answers[:8] == [201] * 8 and 429 in answers, answers  # 10 a minute per address (2 spent above)
    limited = _register(oauth_server)
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    registered = conn.execute("SELECT count(*) FROM oauth_clients").fetchone()
    assert registered is not None and registered[0] <= 10


async def test_the_consent_page_shows_where_the_code_goes(
    oauth_server: Server, conn: psycopg.Connection
) -> None:
    """A client may call itself "Claude Code": the page says, big, which host receives the access."""
    registered = _register(oauth_server, client_name="Claude Code", redirect_uris=["https://evil.example/cb"])
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": "https://evil.example/cb",
        "code_challenge": "x" * 43,
        "code_challenge_method": "S256",
        "state": "s",
    }
    start = httpx2.get(f"{oauth_server.url}/authorize", params=query, follow_redirects=True, timeout=10)
    assert start.status_code == 200, start.text
    assert "calls itself <b>Claude Code</b>" in start.text
    assert "Signing in sends your access to <b>evil.example</b>" in start.text


def test_expired_requests_and_codes_are_pruned(oauth_server: Server, conn: psycopg.Connection) -> None:
    registered = _register(oauth_server)
    client_id = registered.json()["client_id"]
    personal = token(conn, "alice")
    grant = conn.execute("SELECT id FROM tokens").fetchone()
    assert personal and grant is not None
    conn.execute(
        "INSERT INTO oauth_requests (hash, client_id, params, expires_at) "
        "VALUES (sha256('old-request'), %s, '{}', now() - interval '1 hour')",
        (client_id,),
    )
    conn.execute(
        "INSERT INTO oauth_codes (hash, client_id, user_name, grant_id, params, expires_at) "
        "VALUES (sha256('old-code'), %s, 'alice', %s, '{}', now() - interval '1 hour')",
        (client_id, grant[0]),
    )
    conn.commit()
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": "x" * 43,
        "code_challenge_method": "S256",
    }
    assert httpx2.get(f"{oauth_server.url}/authorize", params=query, timeout=10).status_code in (200, 302)
    left = conn.execute(
        "SELECT (SELECT count(*) FROM oauth_requests WHERE expires_at <= now()), "
        "(SELECT count(*) FROM oauth_codes)"
    ).fetchone()
    assert left == (0, 0)


def test_a_forged_x_forwarded_for_is_no_fresh_bucket(oauth_server: Server, conn: psycopg.Connection) -> None:
    """Trust round 4, item 7: uvicorn takes a loopback peer's X-Forwarded-For as the client address,
    and any local process can send one: 15 registrations, each with another forged address, were 15
    fresh buckets. The limit per address keys on the TCP peer now (10 a minute)."""
    body = {"client_name": "Agent", "redirect_uris": [REDIRECT]}
    answers = [
        httpx2.post(
            f"{oauth_server.url}/register",
            json=body,
            headers={"X-Forwarded-For": f"203.0.113.{i}"},
            timeout=10,
        ).status_code
        for i in range(15)
    ]
    assert answers[:10] == [201] * 10 and set(answers[10:]) == {429}, answers
    registered = conn.execute("SELECT count(*) FROM oauth_clients").fetchone()
    assert registered == (10,)
