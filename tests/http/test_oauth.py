"""The MCP spec's authorization flow against `lore serve --oauth`, driven by the SDK's own OAuth
client: discovery, dynamic registration, PKCE, the sign-in page (a personal token pasted into it),
the code exchange, a session as that user; the OAuth tokens die with the personal token."""

from __future__ import annotations

import re
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

from lore import auth

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
    server = start_server(lore_env, tmp_path / "oauth.log", "--oauth", "--log-level", "debug")
    try:
        yield server
    finally:
        server.stop()


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
