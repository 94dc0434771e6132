"""Which tokens sign anyone in, checked on the rows: a personal or OAuth access token that is neither
revoked nor expired signs in its user; a wrong, revoked or expired one, or an OAuth refresh token
used as a bearer token, signs in nobody. Expiry and revocation are set with SQL, not through lore."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from lore.store import auth


def _set(conn: psycopg.Connection, token_id: int, column: str, value: datetime) -> None:
    conn.execute(f"UPDATE tokens SET {column} = %s WHERE id = %s", (value, token_id))
    conn.commit()


@pytest.mark.parametrize("kind", ["personal", "access"])
def test_a_valid_token_signs_in_its_user_and_only_that_token_does(
    conn: psycopg.Connection, kind: str
) -> None:
    token, secret = auth.create(conn, "alice", kind=kind)
    _, other = auth.create(conn, "bob")
    conn.commit()
    who = auth.verify(conn, secret)
    assert who is not None and (who.user, who.token_id, who.kind) == ("alice", token.id, kind)
    bob = auth.verify(conn, other)
    assert bob is not None and bob.user == "bob"
    wrong = secret[:-4] + ("AAAA" if not secret.endswith("AAAA") else "BBBB")
    assert auth.looks_like_token(wrong)
    assert auth.verify(conn, wrong) is None


def test_an_expired_token_signs_in_nobody(conn: psycopg.Connection) -> None:
    token, secret = auth.create(conn, "alice", expires_at=datetime.now(UTC) + timedelta(days=1))
    conn.commit()
    assert auth.verify(conn, secret) is not None
    conn.commit()
    conn.execute(  # made two days ago, expired a second ago
        "UPDATE tokens SET created_at = now() - interval '2 days', expires_at = now() - interval '1 second' "
        "WHERE id = %s",
        (token.id,),
    )
    conn.commit()
    assert auth.verify(conn, secret) is None


def test_a_revoked_token_signs_in_nobody(conn: psycopg.Connection) -> None:
    token, secret = auth.create(conn, "alice")
    conn.commit()
    _set(conn, token.id, "revoked_at", datetime.now(UTC) - timedelta(seconds=1))
    assert auth.verify(conn, secret) is None


def test_a_refresh_token_is_no_bearer_token(conn: psycopg.Connection) -> None:
    parent, _ = auth.create(conn, "alice")
    _, refresh = auth.create(conn, "alice", kind="refresh", client_id="c1", parent_id=parent.id)
    conn.commit()
    assert auth.verify(conn, refresh) is None  # the default kinds: personal and access
    assert auth.verify(conn, refresh, kinds=("refresh",)) is not None  # what /token asks for
