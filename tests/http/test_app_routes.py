"""lore's own Starlette app mounts the SDK's MCP app (lore.http.app): every path answers as when
lore's routes hung on the SDK's app (this test passes on both). A path of lore's with a trailing
slash is redirected, one nobody serves is 404, `/mcp` is the SDK's behind the sign-in check, and
`/api` answers 401 without a token."""

from __future__ import annotations

import httpx2
import psycopg
from support.lorehttp import Server, bearer, token


def test_paths_answer_as_before(signed_in: Server, conn: psycopg.Connection) -> None:
    url = signed_in.url
    assert httpx2.get(f"{url}/healthz", timeout=10).json() == {"ok": True}
    assert httpx2.get(f"{url}/api/me", timeout=10).status_code == 401
    assert httpx2.post(f"{url}/mcp", json={}, timeout=10).status_code == 401
    slash = httpx2.get(f"{url}/api/me/", timeout=10, follow_redirects=False)
    assert slash.status_code in (307, 308) and slash.headers["location"].endswith("/api/me")
    assert httpx2.get(f"{url}/nowhere", timeout=10).status_code == 404
    secret = token(conn, "alice")
    me = httpx2.get(f"{url}/api/me", headers=bearer(secret), timeout=10)
    assert me.status_code == 200 and me.json()["user"] == "alice"
