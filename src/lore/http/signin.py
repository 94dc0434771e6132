"""Sign-in for every HTTP request: the SDK's `TokenVerifier` over lore's tokens table.

The verifier answers with the user as the token's `subject`; the SDK binds each MCP session to the
(client id, subject) that opened it, so a session id is useless with another user's token. The secret
itself is never kept in the `AccessToken` (nor logged): it carries the token's id instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TypeVar

from mcp.server.auth.provider import AccessToken

from lore.core.users import Principal, looks_like_token
from lore.service import accounts
from lore.service.runtime import Runtime

SCOPE = "lore"
T = TypeVar("T", bound=AccessToken)
# The token this request's bearer check verified, and what it found (lore.http.app checks every
# request before it reaches the SDK's app, whose own check of /mcp then asks again): the token's
# digest, never the token.
_CHECKED: ContextVar[tuple[bytes, AccessToken | None] | None] = ContextVar("lore_checked", default=None)


class LoreAccessToken(AccessToken):
    id: int
    parent_id: int | None = None


def access_token(principal: Principal, resource: str | None = None) -> LoreAccessToken:
    """What the SDK keeps of a valid token: never the secret, the token's id instead. The client id
    of a personal token is the token's own; of an OAuth token, its client's (stable across refresh,
    so that a session survives the client refreshing its token)."""
    expires = int(principal.expires_at.timestamp()) if principal.expires_at is not None else None
    return LoreAccessToken(
        token=f"lore-token-{principal.token_id}",
        client_id=principal.client_id or f"lore-token-{principal.token_id}",
        scopes=[SCOPE],
        expires_at=expires,
        resource=resource,
        subject=principal.user,
        id=principal.token_id,
        parent_id=principal.parent_id,
    )


async def checked_once(token: str, verify: Callable[[str], Awaitable[T | None]]) -> T | None:
    """`verify(token)`, asked once a request: the SDK's bearer check inside lore's (lore.http.app)
    gets the answer of lore's, without a second database read."""
    digest = hashlib.sha256(token.encode()).digest()
    seen = _CHECKED.get()
    if seen is not None and seen[0] == digest:
        return seen[1]  # type: ignore[return-value]  # what verify returned for this very token
    found = await verify(token)
    _CHECKED.set((digest, found))
    return found


class DatabaseTokenVerifier:
    """Personal tokens (`lore token create`): valid while neither revoked nor expired."""

    def __init__(self, state: Runtime) -> None:
        self.state = state

    async def verify_token(self, token: str) -> AccessToken | None:
        return await checked_once(token, self._verify)

    async def _verify(self, token: str) -> AccessToken | None:
        if not looks_like_token(token):
            return None  # garbage never reaches the database
        principal = await self.state.call(accounts.verify, token)
        return access_token(principal) if principal is not None else None
