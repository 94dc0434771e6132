"""What `lore serve --oauth` keeps in the database: registered clients (RFC 7591), pending sign-in
requests and one-time authorization codes (both stored as SHA-256 digests, both short-lived), so
that any replica can answer any step. Tokens themselves are lore.auth's.

Expired requests and codes are deleted whenever a new request is made (`prune`), and clients that
never completed a sign-in are deleted a day after they registered.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import psycopg

from lore.store import auth

UNUSED_CLIENT_TTL = timedelta(days=1)

_CLIENT = "SELECT info FROM oauth_clients WHERE client_id = %s"
_REGISTER = "INSERT INTO oauth_clients (client_id, info) VALUES (%s, %s::jsonb)"
_REQUEST = (
    "INSERT INTO oauth_requests (hash, client_id, params, expires_at)"
    " VALUES (%s, %s, %s::jsonb, now() + %s::interval)"
)
_PENDING = """
SELECT coalesce(k.info->>'client_name', r.client_id), r.params
  FROM oauth_requests r JOIN oauth_clients k USING (client_id)
 WHERE r.hash = %s AND r.expires_at > now()"""
_TAKE_REQUEST = (
    "DELETE FROM oauth_requests WHERE hash = %s AND expires_at > now() RETURNING client_id, params"
)
_CODE = """
INSERT INTO oauth_codes (hash, client_id, user_name, grant_id, params, expires_at)
VALUES (%s, %s, %s, %s, %s::jsonb, now() + %s::interval)"""
_LOAD_CODE = """
SELECT user_name, grant_id, params, extract(epoch FROM expires_at)
  FROM oauth_codes WHERE hash = %s AND client_id = %s"""
_TAKE_CODE = "DELETE FROM oauth_codes WHERE hash = %s RETURNING user_name"
_PRUNE_REQUESTS = "DELETE FROM oauth_requests WHERE expires_at <= now()"
_PRUNE_CODES = "DELETE FROM oauth_codes WHERE expires_at <= now()"
_PRUNE_CLIENTS = """
DELETE FROM oauth_clients k
 WHERE k.created_at < now() - %s::interval
   AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.client_id = k.client_id)
   AND NOT EXISTS (SELECT 1 FROM oauth_requests r WHERE r.client_id = k.client_id AND r.expires_at > now())"""


def client(conn: psycopg.Connection, client_id: str) -> dict[str, Any] | None:
    row = conn.execute(_CLIENT, (client_id,)).fetchone()
    return dict(row[0]) if row else None


def register(conn: psycopg.Connection, client_id: str, info: dict[str, Any]) -> None:
    conn.execute(_REGISTER, (client_id, json.dumps(info)))


def add_request(
    conn: psycopg.Connection, request_id: str, client_id: str, params: dict[str, Any], ttl: timedelta
) -> None:
    conn.execute(_REQUEST, (auth.digest(request_id), client_id, json.dumps(params), ttl))


def pending(conn: psycopg.Connection, request_id: str) -> tuple[str, dict[str, Any]] | None:
    """(client name, authorization params) of a live request."""
    row = conn.execute(_PENDING, (auth.digest(request_id),)).fetchone()
    return (str(row[0]), dict(row[1])) if row else None


def take_request(conn: psycopg.Connection, request_id: str) -> tuple[str, dict[str, Any]] | None:
    """A live request, used up: (client id, params); None when it expired or was used."""
    row = conn.execute(_TAKE_REQUEST, (auth.digest(request_id),)).fetchone()
    return (str(row[0]), dict(row[1])) if row else None


def add_code(
    conn: psycopg.Connection,
    code: str,
    client_id: str,
    user: str,
    grant_id: int,
    params: dict[str, Any],
    ttl: timedelta,
) -> None:
    conn.execute(_CODE, (auth.digest(code), client_id, user, grant_id, json.dumps(params), ttl))


def load_code(
    conn: psycopg.Connection, code: str, client_id: str
) -> tuple[str, int, dict[str, Any], float] | None:
    """(user, grant id, params, expires at as epoch seconds) of a code issued to `client_id`."""
    row = conn.execute(_LOAD_CODE, (auth.digest(code), client_id)).fetchone()
    return (str(row[0]), int(row[1]), dict(row[2]), float(row[3])) if row else None


def take_code(conn: psycopg.Connection, code: str) -> str | None:
    """Use a code up; the user it was issued for, or None when it was used already."""
    row = conn.execute(_TAKE_CODE, (auth.digest(code),)).fetchone()
    return str(row[0]) if row else None


def prune(conn: psycopg.Connection) -> int:
    """Delete expired requests and codes, and clients that never signed anyone in; how many rows."""
    gone = conn.execute(_PRUNE_REQUESTS).rowcount + conn.execute(_PRUNE_CODES).rowcount
    return gone + conn.execute(_PRUNE_CLIENTS, (UNUSED_CLIENT_TTL,)).rowcount
