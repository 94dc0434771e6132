"""`lore login [URL]`, `lore logout`, `lore mcp-headers`: sign this machine in to a lore server, as
`gh auth login` does for GitHub: one server and token per machine, stored owner-only in lore's config
directory (lore.core.login); from then on every command (lore.cli.gateway), hook
(lore.hooks.credentials) and `lore install` use it, and `LORE_URL` / `LORE_TOKEN` still win.

The token is never an argument (every user of a machine can read another's command lines): it is
pasted at a prompt that does not echo it, read from standard input (`--with-token`), or never seen
at all (`--browser`: the server's OAuth flow, lore.cli.loopback). It is checked against the server
(`GET /api/me`) before anything is stored."""

from __future__ import annotations

import getpass
import json
import os
import sys
from urllib.parse import urlsplit

from lore.core import login
from lore.core.errors import InvalidInput, LoreError, Refused
from lore.core.users import looks_like_token
from lore.hooks import credentials, remote


def run(url: str | None = None, *, with_token: bool = False, browser: bool = False,
        no_open: bool = False) -> int:  # fmt: skip
    if url is None:
        return status()
    base = base_url(url)
    token = "" if browser else _token(with_token)
    # No token (--browser, or Enter at the prompt): the server's OAuth flow in a browser.
    stored = login.Login(base, whoami(base, token), token) if token else _browser(base, no_open)
    where = login.write(os.environ, stored)
    print(f"Signed in to {login.origin(base)} as {stored.user}; stored in {where} (readable by you only).")
    print("Every lore command, hook and `lore install` on this machine now use this server;")
    print("LORE_URL and LORE_TOKEN still win when set. `lore logout` forgets it; `lore doctor` checks it.")
    return 0


def base_url(url: str) -> str:
    """The server's base URL as given, checked: http(s), a host, no user, query or fragment."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or "@" in parts.netloc:
        raise InvalidInput(
            f"{url!r} is not a server URL.", "Give its base URL, e.g. https://lore.example.com"
        )
    if parts.query or parts.fragment:
        raise InvalidInput(f"{url!r} has a query or a fragment.", "Give the server's base URL only.")
    if parts.scheme == "http" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        print(f"note: {login.origin(url)} is plain http: the token crosses the network unencrypted.",
              file=sys.stderr)  # fmt: skip
    return url.strip().rstrip("/")


def _token(with_token: bool) -> str:
    if with_token or not sys.stdin.isatty():
        token = sys.stdin.readline().strip()
        if not token:
            raise InvalidInput("No token on standard input.", 'echo "$TOKEN" | lore login URL --with-token')
        return token
    prompt = (
        "Paste your lore token (from `lore token create YOU` on the server; Enter: sign in in a browser): "
    )
    return getpass.getpass(prompt).strip()


def whoami(base: str, token: str) -> str:
    """The user `token` signs in at `base`; refused (nothing stored) when the server does not take it."""
    if not looks_like_token(token):
        raise InvalidInput("That is not a lore token (lore_ and 43 more characters).",
                           "Copy the whole line `lore token create YOU` printed.")  # fmt: skip
    try:
        me = remote.call(base, token, "/api/me", None, timeout=15.0, named="that token")
    except LoreError as exc:
        raise Refused(
            f"Not signed in: {exc.message}", "Nothing was stored; check the URL and the token."
        ) from None
    if me.get("mode") != "sign-in" or not isinstance(me.get("user"), str):
        raise Refused(
            f"{login.origin(base)} runs without sign-in (a local `lore serve`): nothing to log in to.",
            "Log in to a `lore serve --sign-in` server.",
        )
    return str(me["user"])


def _browser(base: str, no_open: bool) -> login.Login:
    from lore.cli import loopback

    def show(link: str) -> None:
        print("Sign in in your browser (paste your lore token into the server's page):", file=sys.stderr)
        print(f"  {link}", file=sys.stderr, flush=True)
        if not no_open:
            import webbrowser

            webbrowser.open(link)

    return loopback.sign_in(base, lambda token: whoami(base, token), show)


def logout() -> int:
    try:
        stored = login.read(os.environ)
    except LoreError:  # an unusable file: removed all the same
        stored = None
    if not login.remove(os.environ):
        print(f"Not signed in ({login.path(os.environ)} does not exist); nothing to forget.")
        return 0
    if stored is not None:
        from lore.cli import loopback

        ended = " (its tokens revoked on the server)" if loopback.revoke(stored) else ""
        print(f"Signed out of {login.origin(stored.url)}{ended}; removed {login.path(os.environ)}.")
    else:
        print(f"Removed {login.path(os.environ)}.")
    print("Commands and hooks on this machine use its own database again (unless LORE_URL is set).")
    return 0


def status() -> int:
    server = credentials.server(os.environ)
    if server is None:
        print(
            "Not signed in: commands and hooks here use this machine's database. `lore login URL` signs in."
        )
        return 0
    how = f"as {server.user}, stored by `lore login`" if server.stored else "from LORE_URL and LORE_TOKEN"
    print(f"Using {server.origin} ({how}).")
    return 0


def headers() -> int:
    """The Authorization header a hosted MCP entry sends, as the JSON object Claude Code's
    `headersHelper` reads: LORE_TOKEN when set, else the stored login's (refreshed when it ran out).
    The token goes to this command's standard output only, for the agent that asked for it."""
    server = credentials.server(os.environ)
    if server is None or not server.token:
        raise Refused("No token: not signed in here.", "Run `lore login URL` (or set LORE_TOKEN).")
    print(json.dumps({"Authorization": f"Bearer {server.token}"}))
    return 0
