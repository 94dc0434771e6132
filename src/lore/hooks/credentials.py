"""Which server this machine's hooks and commands talk to, and with which token: `LORE_URL` (with
`LORE_TOKEN`) when set, else the login `lore login URL` stored (lore.core.login). A stored token is
only ever sent to the server it was issued by: with `LORE_URL` naming another origin and no
`LORE_TOKEN`, none is sent. An OAuth access token that ran out is refreshed here (one request to the
server's token endpoint, under a file lock: the server rotates the refresh token) and stored again.

Standard library only (the hook's import budget; docs/benchmarks.md has what reading the login costs).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from lore.core import login
from lore.core.errors import RemoteError

ENV_TOKEN = "LORE_TOKEN"
STORED_TOKEN = "the token `lore login` stored"


@dataclass(frozen=True)
class Server:
    url: str
    token: str
    named: str = ENV_TOKEN  # what an error calls the token (never the token itself)
    user: str | None = None  # who the stored login signed in as (None: from the environment)
    stored: bool = False  # the server comes from `lore login`, not LORE_URL
    oauth: bool = False  # the token is an OAuth access token (renewed as it runs out)

    @property
    def origin(self) -> str:
        return login.origin(self.url)


def server(env: Mapping[str, str], *, timeout: float = 5.0) -> Server | None:
    """The server in use, or None (this machine's own database). `timeout` bounds the refresh of an
    OAuth access token that ran out."""
    env_url = env.get("LORE_URL", "").strip().rstrip("/")
    env_token = env.get(ENV_TOKEN, "").strip()
    if env_url and env_token:
        return Server(env_url, env_token)  # the login is not read: nothing of it goes along
    found = where(env)
    if found is None:
        return None
    url, stored = found
    if env_token:
        return Server(url, env_token, ENV_TOKEN, stored.user if stored else None, stored=not env_url)
    if stored is not None:
        token = fresh(env, stored, timeout).token
        return Server(url, token, STORED_TOKEN, stored.user, stored=not env_url, oauth=stored.kind == "oauth")
    return Server(url, "")  # LORE_URL alone, to another server: no token goes there


def where(env: Mapping[str, str], url: str | None = None) -> tuple[str, login.Login | None] | None:
    """Which server this machine uses, asking nothing of it (no token is refreshed): `url` when given
    (`lore install --server URL`), else `LORE_URL`, else the one `lore login` stored; with the stored
    login when its token may go there (the same origin), else None. None: this machine's database."""
    stored = login.read(env)
    chosen = (url or env.get("LORE_URL", "")).strip().rstrip("/") or (stored.url if stored else "")
    if not chosen:
        return None
    return chosen, (
        stored if stored is not None and login.origin(stored.url) == login.origin(chosen) else None
    )


def fresh(env: Mapping[str, str], stored: login.Login, timeout: float) -> login.Login:
    """`stored`, with its OAuth access token refreshed when it ran out (or nearly)."""
    if not stored.stale(time.time()):
        return stored
    with login.locked(env):
        again = login.read(env) or stored  # another process may have refreshed it meanwhile
        if not again.stale(time.time()):
            return again
        with _whole():
            renewed = refresh(again, timeout)
            login.write(env, renewed)
        return renewed


@contextmanager
def _whole() -> Iterator[None]:
    """The refresh and the write of its answer, never cut in between by a hook's deadline (its
    SIGALRM waits until both are done): the server has already spent the old refresh token, so a new
    pair lost there would leave the machine to sign in again."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def refresh(stored: login.Login, timeout: float) -> login.Login:
    """A new access token (and, rotated, refresh token) from the server's token endpoint."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    assert stored.token_endpoint and stored.refresh_token and stored.client_id
    body = urlencode(
        {"grant_type": "refresh_token", "refresh_token": stored.refresh_token, "client_id": stored.client_id}
    ).encode()
    request = urllib.request.Request(
        stored.token_endpoint,
        data=body,
        method="POST",
        headers={"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"},
    )
    from lore.hooks.remote import opener

    try:
        with opener().open(request, timeout=timeout) as response:
            data = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        exc.close()
        raise RemoteError(
            f"the server refused to renew the sign-in of `lore login` ({exc.code}): "
            f"run `lore login {stored.url}` again"
        ) from None
    except (OSError, ValueError) as exc:
        raise RemoteError(
            f"cannot renew the sign-in at {login.origin(stored.url)}: {type(exc).__name__}"
        ) from None
    token = data.get("access_token") if isinstance(data, dict) else None
    if not isinstance(token, str) or not token:
        raise RemoteError(f"the server at {login.origin(stored.url)} answered no access token")
    expires = data.get("expires_in")
    seconds = float(expires) if isinstance(expires, int | float) and expires > 0 else 3600.0
    renewed = data.get("refresh_token")
    return stored.refreshed(token, renewed if isinstance(renewed, str) else None, seconds, time.time())
