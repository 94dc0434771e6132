"""`lore login URL --browser`: the OAuth flow `lore serve --oauth` serves (lore.http.oauth), as a native
app does it (RFC 8252): a one-shot HTTP listener on this machine's loopback (127.0.0.1, a port the
system picks) receives the code. The server's metadata names its endpoints; lore registers itself as a
public client (no secret) whose only redirect is that listener, sends the browser to the sign-in page
(where the person pastes a personal token, once, into the server's page, never into this terminal),
checks `state`, and trades the code and its PKCE verifier (S256) for an access token (1 hour) and a
refresh token (30 days). This machine keeps only those two: never the personal token.

Standard library only."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from lore.core.errors import InvalidInput, LoreError, Refused
from lore.core.login import Login, origin
from lore.hooks import remote

WAIT = 300.0  # how long the listener waits for the browser to come back
CLIENT_NAME = "lore command line"


@dataclass(frozen=True)
class Endpoints:
    authorize: str
    token: str
    register: str
    revoke: str | None


def endpoints(base: str, timeout: float = 10.0) -> Endpoints:
    """The server's authorization endpoints, from its metadata; refused with the fix when the server
    does not serve the flow (a plain `--sign-in`)."""
    try:
        meta = remote.call(base, "", "/.well-known/oauth-authorization-server", None, timeout=timeout)
        return Endpoints(
            meta["authorization_endpoint"], meta["token_endpoint"], meta["registration_endpoint"],
            meta.get("revocation_endpoint"),
        )  # fmt: skip
    except (LoreError, KeyError):
        raise Refused(
            f"{origin(base)} does not serve the OAuth sign-in flow (it runs without --oauth).",
            f"Paste a token instead: `lore token create YOU` on the server, then `lore login {base}`.",
        ) from None


def sign_in(base: str, who: Callable[[str], str], show: Callable[[str], None]) -> Login:
    """The whole flow; `who(token)` names the user a token signs in (GET /api/me), `show(link)` gives
    the person the link (printed, and opened in a browser unless they said not to)."""
    found = endpoints(base)
    listener = _Listener()
    try:
        redirect = f"http://127.0.0.1:{listener.port}/callback"
        client_id = _register(found, redirect)
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(24)
        query = {
            "response_type": "code", "client_id": client_id, "redirect_uri": redirect, "state": state,
            "code_challenge": challenge, "code_challenge_method": "S256", "scope": "lore",
            "resource": f"{base}/mcp",
        }  # fmt: skip
        show(f"{found.authorize}?{urlencode(query)}")
        got = listener.wait(WAIT)
    finally:
        listener.close()
    if got.get("state") != state or not got.get("code"):
        raise Refused("The sign-in did not come back from the server (or came back altered).", "Try again.")
    issued = _form(
        found.token,
        {
            "grant_type": "authorization_code", "code": got["code"], "redirect_uri": redirect,
            "client_id": client_id, "code_verifier": verifier, "resource": f"{base}/mcp",
        },
    )  # fmt: skip
    token = str(issued.get("access_token") or "")
    seconds = float(issued.get("expires_in") or 3600)
    return Login(
        base, who(token), token, kind="oauth", refresh_token=issued.get("refresh_token"),
        expires_at=time.time() + seconds, client_id=client_id, token_endpoint=found.token,
    )  # fmt: skip


def revoke(stored: Login, timeout: float = 10.0) -> bool:
    """End an OAuth sign-in on the server (`lore logout`): its refresh token, and with it the access
    tokens issued from it. False when the server could not be told (the tokens then run out)."""
    if stored.kind != "oauth" or not stored.refresh_token or not stored.client_id:
        return False
    try:
        found = endpoints(stored.url, timeout)
        if found.revoke is None:
            return False
        # An empty client_secret: this is a public client (none), but the SDK's revocation endpoint
        # refuses a request without the field.
        fields = {"token": stored.refresh_token, "client_id": stored.client_id, "client_secret": ""}
        _form(found.revoke, fields, timeout)
    except LoreError:
        return False
    return True


def _register(found: Endpoints, redirect: str) -> str:
    body = {
        "client_name": CLIENT_NAME, "redirect_uris": [redirect], "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"], "scope": "lore",
    }  # fmt: skip
    answer = remote.call(found.register, "", "", body, timeout=10.0)
    client_id = answer.get("client_id")
    if not isinstance(client_id, str):
        raise LoreError(
            "The server registered no client for lore.", "Paste a token instead (`lore login URL`)."
        )
    return client_id


def _form(url: str, fields: dict[str, str], timeout: float = 10.0) -> dict[str, Any]:
    """A form POST (the token and revocation endpoints'), its JSON answer; no redirect followed."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        url,
        data=urlencode(fields).encode(),
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
    )
    try:
        with remote.opener().open(request, timeout=timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            detail = exc.read(4096)
        raise Refused(
            f"The server refused the sign-in ({exc.code}): {detail.decode(errors='replace')[:200]}"
        ) from None
    except OSError as exc:
        raise LoreError(f"cannot reach {origin(url)}: {exc}") from None
    data = json.loads(raw or b"{}") if raw.strip() else {}
    return data if isinstance(data, dict) else {}


class _Listener:
    """One request to /callback on 127.0.0.1: its query, kept; every other path 404s."""

    def __init__(self) -> None:
        self.result: dict[str, str] = {}
        self.done = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != "/callback" or outer.done.is_set():
                    self.send_error(404)
                    return
                outer.result = {k: v[0] for k, v in parse_qs(parts.query).items()}
                outer.done.set()
                page = b"<!doctype html><title>lore</title><p>Signed in. You can close this tab.</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: Any) -> None:  # the query holds the code: never logged
                return

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="lore-login")
        self.thread.start()

    def wait(self, seconds: float) -> dict[str, str]:
        if not self.done.wait(seconds):
            raise InvalidInput(
                f"No sign-in came back within {seconds:.0f} s.", "Run `lore login URL --browser` again."
            )
        return self.result

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
