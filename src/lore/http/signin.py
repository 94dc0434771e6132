"""Sign-in for every HTTP request: the SDK's `TokenVerifier` over lore's tokens table.

The verifier answers with the user as the token's `subject`; the SDK binds each MCP session to the
(client id, subject) that opened it, so a session id is useless with another user's token. The secret
itself is never kept in the `AccessToken` (nor logged): it carries the token's id instead.
"""

from __future__ import annotations

from mcp.server.auth.provider import AccessToken

from lore.core.users import Principal, looks_like_token
from lore.service import accounts
from lore.service.runtime import Runtime

SCOPE = "lore"


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


class DatabaseTokenVerifier:
    """Personal tokens (`lore token create`): valid while neither revoked nor expired."""

    def __init__(self, state: Runtime) -> None:
        self.state = state

    async def verify_token(self, token: str) -> AccessToken | None:
        if not looks_like_token(token):
            return None  # garbage never reaches the database
        principal = await self.state.call(accounts.verify, token)
        return access_token(principal) if principal is not None else None
