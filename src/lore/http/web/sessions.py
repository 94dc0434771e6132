"""Web UI sessions: who a browser is, from one cookie; the CSRF token of each session.

The cookie holds a random secret (`lorew_` + 256 bits); the server keeps only its SHA-256, as for
sign-in tokens. It is HttpOnly, SameSite=Strict, Path=/, and over https Secure with the `__Host-`
prefix. A session lasts 12 hours, never longer than the token it was signed in with.

- Sign-in mode: a session is a row of `tokens` (kind `access`, client `lore-web`) whose parent is the
  personal token the user signed in with. Any replica answers; `lore token revoke` of the personal
  token (or `--user`) ends its sessions; sign-out revokes the row. The secret's prefix differs from a
  token's, so a session cookie never works as a bearer token on `/mcp` or `/api`.
- Local mode (loopback, one user): sessions live in this process's memory; a restart signs out.

The CSRF token is HMAC-SHA256(session secret, "lore-web-csrf"): one per session, derived from the
cookie, so a page of another site (which can neither read the cookie nor the page) cannot forge it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from lore.core.users import Principal, digest
from lore.service import accounts, forms
from lore.service.runtime import Runtime

PREFIX = "lorew_"
CLIENT_ID = "lore-web"
TTL = timedelta(hours=12)
COOKIE = "lore_session"
SECURE_COOKIE = "__Host-lore_session"  # the browser accepts it only Secure, Path=/, without Domain
MAX_SECRET = 64


@dataclass(frozen=True)
class Session:
    user: str  # who signed in (local mode: the token's user, or "local" through the one-time link)
    secret: str
    expires_at: datetime

    @property
    def csrf(self) -> str:
        return csrf_token(self.secret)


def new_secret() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def looks_like_session(value: str) -> bool:
    return value.startswith(PREFIX) and len(value) <= MAX_SECRET


def csrf_token(secret: str) -> str:
    mac = hmac.new(secret.encode(), b"lore-web-csrf", hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def csrf_ok(secret: str, sent: str) -> bool:
    return bool(sent) and hmac.compare_digest(csrf_token(secret).encode(), sent.encode())


def expiry(now: datetime, token_expires: datetime | None) -> datetime:
    """A session ends after TTL, or with the token it came from, whichever is first."""
    end = now + TTL
    return min(end, token_expires) if token_expires is not None else end


class Store(Protocol):
    async def sign_in(self, token: str) -> Session | None: ...
    async def start(self) -> Session: ...
    async def find(self, secret: str) -> Session | None: ...
    async def end(self, secret: str) -> None: ...


class DatabaseSessions:
    """Sign-in mode: sessions as child rows of the personal token (see the module docstring)."""

    def __init__(self, state: Runtime) -> None:
        self.state = state

    async def sign_in(self, token: str) -> Session | None:
        """A session of the user a personal token signs in (None: not a valid one), started in the
        transaction that checks the token."""
        secret = new_secret()
        found = await self.state.call(
            forms.web_session, token, secret, CLIENT_ID, lambda p: expiry(datetime.now(UTC), p.expires_at)
        )
        return Session(found[0].user, secret, found[1]) if found is not None else None

    async def start(self) -> Session:
        raise AssertionError("sign-in mode signs in with a token only")

    async def find(self, secret: str) -> Session | None:
        if not looks_like_session(secret):
            return None
        found = await self.state.call(accounts.find_web_session, secret, CLIENT_ID)
        return Session(found[0], secret, found[1]) if found else None

    async def end(self, secret: str) -> None:
        if looks_like_session(secret):
            await self.state.call(accounts.end_web_session, secret, CLIENT_ID)


class MemorySessions:
    """Local mode: one process on loopback, so its memory is the whole truth. `state`: where the
    tokens a person may sign in with are checked."""

    LIMIT = 1000

    def __init__(self, state: Runtime | None = None) -> None:
        self.state = state
        self._lock = threading.Lock()
        self._rows: dict[bytes, tuple[str, datetime]] = {}

    async def sign_in(self, token: str) -> Session | None:
        """A session of the user a personal token signs in (None: not a valid one)."""
        assert self.state is not None, "made without a runtime: no token to check"
        principal = await self.state.call(accounts.verify, token, ("personal",))
        return await self.start(principal) if principal is not None else None

    async def start(self, principal: Principal | None = None) -> Session:
        secret = new_secret()
        now = datetime.now(UTC)
        user = principal.user if principal is not None else "local"
        until = expiry(now, principal.expires_at if principal is not None else None)
        with self._lock:
            self._rows = {k: v for k, v in self._rows.items() if v[1] > now}
            if len(self._rows) >= self.LIMIT:
                self._rows.pop(min(self._rows, key=lambda k: self._rows[k][1]))
            self._rows[digest(secret)] = (user, until)
        return Session(user, secret, until)

    async def find(self, secret: str) -> Session | None:
        if not looks_like_session(secret):
            return None
        with self._lock:
            row = self._rows.get(digest(secret))
        if row is None or row[1] <= datetime.now(UTC):
            return None
        return Session(row[0], secret, row[1])

    async def end(self, secret: str) -> None:
        with self._lock:
            self._rows.pop(digest(secret), None)


# How long local mode's sign-in link works while nobody uses it: long enough to click it from the
# terminal that printed it; a link left in scrollback or a shell log does not open the UI later.
LINK_TTL = timedelta(minutes=10)


class SignInLink:
    """Local mode's one-time sign-in link, printed by `lore serve` / `lore run` in the terminal that
    started it (only that user sees it). Good for one sign-in within LINK_TTL of being made; only its
    digest is kept."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.code = secrets.token_urlsafe(24)
        self._digest: bytes | None = hashlib.sha256(self.code.encode()).digest()
        self._lock = threading.Lock()
        self._clock = clock
        self._until = clock() + LINK_TTL.total_seconds()

    def consume(self, code: str) -> bool:
        wanted = hashlib.sha256(code.encode()).digest()
        with self._lock:
            if self._digest is None or not hmac.compare_digest(self._digest, wanted) or self.expired:
                return False
            self._digest = None
            return True

    @property
    def used(self) -> bool:
        return self._digest is None

    @property
    def expired(self) -> bool:
        return self._clock() >= self._until
