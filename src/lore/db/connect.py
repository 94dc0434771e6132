"""Which database, and connections to it. psycopg errors are translated here, once."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from lore.core.errors import Conflict, DatabaseError
from lore.core.redact import redact
from lore.db import embedded, migrate

# Transactions PostgreSQL rolls back whole when two writers collide: safe to run again.
ROLLED_BACK = (
    psycopg.errors.TransactionRollback,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.SerializationFailure,
)


@dataclass(frozen=True)
class Target:
    url: str
    embedded: bool

    def describe(self) -> str:
        if self.embedded:
            return f"embedded PostgreSQL ({embedded.pgdata_dir()})"
        return "external PostgreSQL (LORE_DATABASE_URL or [database] url)"


def target(
    config_url: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    start: bool = True,
    release: bool = False,
) -> Target:
    """`LORE_DATABASE_URL`, else `[database] url`, else the embedded server (started on demand,
    unless `lore db stop` holds it stopped and this is not the user asking: see embedded.HELD)."""
    env = os.environ if env is None else env
    url = env.get("LORE_DATABASE_URL") or config_url
    if url:
        return Target(url, embedded=False)
    if start:
        return Target(embedded.start(env, release=release), embedded=True)
    running = embedded.running_url(env)
    if running is None:
        raise DatabaseError("The embedded PostgreSQL is not running.", "Start it with `lore db start`.")
    return Target(running, embedded=True)


def connect(url: str, *, autocommit: bool = False, connect_timeout: int = 10) -> psycopg.Connection:
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=connect_timeout)
    except psycopg.OperationalError as exc:
        raise DatabaseError(
            f"Cannot connect to PostgreSQL: {redact(str(exc)).strip().splitlines()[0]}",
            "Run `lore doctor`; for the embedded database, `lore db start`.",
        ) from exc


@contextmanager
def translated() -> Iterator[None]:
    """Turn a lost connection into a DatabaseError that says what to do, and a transaction that
    PostgreSQL rolled back (deadlock, serialization failure) into a Conflict: nothing was written."""
    try:
        yield
    except ROLLED_BACK as exc:
        raise Conflict(
            "Another session's write collided with this one at the same moment; nothing was written.",
            "Call again.",
        ) from exc
    except psycopg.OperationalError as exc:
        raise DatabaseError(
            f"Lost the connection to PostgreSQL: {redact(str(exc)).strip().splitlines()[0]}",
            "Retry; if it persists run `lore doctor` (for the embedded database: `lore db start`).",
        ) from exc


def open_and_migrate(url: str) -> psycopg.Connection:
    conn = connect(url)
    migrate.upgrade(conn)
    return conn
