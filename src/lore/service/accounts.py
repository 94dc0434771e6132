"""Users and sign-in, for `lore serve --sign-in`: tokens (`lore token`), a user's config pushed to
the server (`lore config push`), web UI sessions, and the steps of the OAuth 2.1 flow (`--oauth`:
lore.http.oauth is the SDK's provider interface over these). Every step that writes more than one
row is one transaction here."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from lore.core import links
from lore.core.errors import InvalidInput, Refused
from lore.core.users import Principal, Token, UserConfig, check_user, parse_expiry
from lore.service.runtime import Runtime
from lore.store import auth, oauth_store, userconfig

# --- tokens ----------------------------------------------------------------------------------------


def create_token(
    rt: Runtime, user: object, *, expires: str | None = None, label: str | None = None
) -> tuple[Token, str]:
    """A personal token for `user` (created if new); returns (row, secret): the secret is shown once."""
    if not isinstance(user, str) or not user:
        raise InvalidInput(
            "lore token create needs a user name", "e.g. `lore token create alice --expires 90d`"
        )
    when = parse_expiry(expires, datetime.now(UTC))
    if label is not None and not 1 <= len(label) <= 200:
        raise InvalidInput("--label must be 1-200 characters", "e.g. --label laptop")
    return rt.transact(lambda c: auth.create(c, user, expires_at=when, label=label))


def tokens(rt: Runtime, user: str | None = None) -> list[Token]:
    return rt.transact(lambda c: auth.list_tokens(c, user))


def revoke_token(rt: Runtime, token_id: int) -> Token:
    """Revoke a token and every token issued from it (OAuth access and refresh tokens, web sessions)."""
    return rt.transact(lambda c: auth.revoke(c, token_id))


def revoke_user(rt: Runtime, user: str) -> int:
    return rt.transact(lambda c: auth.revoke_user(c, check_user(user)))


def verify(rt: Runtime, secret: str, kinds: Sequence[str] = ("personal", "access")) -> Principal | None:
    """Who a valid token signs in (None: unknown, revoked, expired; all alike)."""
    if not auth.looks_like_token(secret):
        return None  # garbage never reaches the database
    return rt.transact(lambda c: auth.verify(c, secret, kinds=kinds))


# --- a user's config ---------------------------------------------------------------------------------


def push_config(rt: Runtime, user: str, text: str, home: str) -> UserConfig:
    """Validate and store `text` as `user`'s config; this server applies it at once (the others
    within lore.store.accounts.TTL)."""
    pushed = rt.transact(lambda c: userconfig.push(c, user, text, home))
    if rt.accounts is not None:
        rt.accounts.store(pushed)
    return pushed


def link_report(rt: Runtime, user: str) -> list[dict[str, object]]:
    """Each entry of `user`'s pushed config naming a teammate's space, and whether it is linked now
    (lore.core.links: the teammate's config names it back)."""
    if rt.accounts is None:
        return []
    own = rt.accounts.pushed(user)
    others = {name: rt.accounts.pushed(name).config for name in links.named_users(own.config, user)}
    return links.report(own.config, user, others)


# --- web UI sessions -----------------------------------------------------------------------------------


def start_web_session(
    rt: Runtime, principal: Principal, secret: str, client_id: str, until: datetime
) -> None:
    rt.transact(
        lambda c: auth.add_web_session(c, principal.user, secret, client_id, principal.token_id, until)
    )


def find_web_session(rt: Runtime, secret: str, client_id: str) -> tuple[str, datetime] | None:
    return rt.transact(lambda c: auth.find_web_session(c, secret, client_id))


def end_web_session(rt: Runtime, secret: str, client_id: str) -> None:
    rt.transact(lambda c: auth.end_web_session(c, secret, client_id))


# --- OAuth 2.1 -----------------------------------------------------------------------------------------


class GrantEnded(Refused):
    """The personal token a client signed in with was revoked or expired (or a code was used twice)."""


@dataclass(frozen=True)
class Issued:
    access_token: str
    refresh_token: str
    expires_in: int  # seconds


def oauth_client(rt: Runtime, client_id: str) -> dict[str, Any] | None:
    return rt.transact(lambda c: oauth_store.client(c, client_id))


def register_oauth_client(rt: Runtime, client_id: str, info: dict[str, Any]) -> None:
    rt.transact(lambda c: oauth_store.register(c, client_id, info))


def add_oauth_request(rt: Runtime, client_id: str, data: dict[str, Any], ttl: timedelta) -> str:
    """A pending authorization request (its id goes into the sign-in link); expired ones go."""
    request_id = secrets.token_urlsafe(32)

    def add(conn: psycopg.Connection) -> None:
        oauth_store.prune(conn)
        oauth_store.add_request(conn, request_id, client_id, data, ttl)

    rt.transact(add)
    return request_id


def pending_oauth_request(rt: Runtime, request_id: str) -> tuple[str, dict[str, Any]] | None:
    """(client name, authorization params) of a live request."""
    if not request_id or len(request_id) > 100:
        return None
    return rt.transact(lambda c: oauth_store.pending(c, request_id))


def issue_code(
    rt: Runtime, request_id: str, principal: Principal, ttl: timedelta
) -> tuple[str, dict[str, Any]] | None:
    """The request taken (once) and a code issued for it: (code, authorization params); None when
    the request is gone."""

    def issue(conn: psycopg.Connection) -> tuple[str, dict[str, Any]] | None:
        with conn.transaction():
            taken = oauth_store.take_request(conn, request_id)
            if taken is None:
                return None
            code = secrets.token_urlsafe(32)
            client_id, data = taken
            oauth_store.add_code(conn, code, client_id, principal.user, principal.token_id, data, ttl)
        return code, data

    return rt.transact(issue)


def load_code(rt: Runtime, code: str, client_id: str) -> tuple[str, int, dict[str, Any], float] | None:
    """(user, grant id, authorization params, expires at) of a live code of this client."""
    return rt.transact(lambda c: oauth_store.load_code(c, code, client_id))


@dataclass(frozen=True)
class Lifetimes:
    access: timedelta
    refresh: timedelta


def exchange_code(rt: Runtime, code: str, client_id: str, grant_id: int, ttl: Lifetimes) -> Issued:
    """A code spent (once) for a refresh token and an access token under it."""

    def spend(conn: psycopg.Connection) -> str:
        user = oauth_store.take_code(conn, code)
        if user is None:
            raise GrantEnded("authorization code already used")
        return user

    return _issue(rt, spend, client_id, grant_id, ttl)


def rotate_refresh(
    rt: Runtime, refresh_id: int, user: str, client_id: str, grant_id: int, ttl: Lifetimes
) -> Issued:
    """Rotation: the old refresh token (and its access tokens) revoked, a new pair issued."""

    def spend(conn: psycopg.Connection) -> str:
        auth.revoke(conn, refresh_id)
        return user

    return _issue(rt, spend, client_id, grant_id, ttl)


def _issue(
    rt: Runtime, spend: Callable[[psycopg.Connection], str], client_id: str, grant_id: int, ttl: Lifetimes
) -> Issued:
    """`spend` (a code or a refresh token; it names the user) and the new pair, in one transaction."""

    def issue(conn: psycopg.Connection) -> Issued:
        with conn.transaction():
            return _tokens(conn, spend(conn), client_id, grant_id, ttl)

    return rt.transact(issue)


def _tokens(conn: psycopg.Connection, user: str, client_id: str, grant_id: int, ttl: Lifetimes) -> Issued:
    """A refresh token under the grant and an access token under it; none past the grant's life."""
    live, limit = auth.grant_expiry(conn, grant_id)
    if not live:
        raise GrantEnded("the token used to sign in was revoked or has expired")
    now = datetime.now(UTC)

    def cap(ttl: timedelta) -> datetime:
        return min(now + ttl, limit) if limit is not None else now + ttl

    refresh, refresh_secret = auth.create(
        conn, user, kind="refresh", client_id=client_id, parent_id=grant_id, expires_at=cap(ttl.refresh)
    )
    access, access_secret = auth.create(
        conn, user, kind="access", client_id=client_id, parent_id=refresh.id, expires_at=cap(ttl.access)
    )
    assert access.expires_at is not None
    return Issued(access_secret, refresh_secret, max(1, int((access.expires_at - now).total_seconds())))
