"""Which database, and connections to it. psycopg errors are translated here, once."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import psycopg

from lore.core.errors import Conflict, DatabaseError
from lore.core.pooling import LISTEN_OFF, Plan, choose
from lore.core.redact import redact
from lore.db import embedded, locate

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
    # Through a transaction pooler or not, and where LISTEN goes (lore.core.pooling).
    plan: Plan | None = None

    @property
    def pooled(self) -> bool:
        return self.plan is not None and self.plan.pooled

    @property
    def listen_url(self) -> str | None:
        return self.url if self.plan is None else self.plan.listen_url

    def describe(self) -> str:
        if self.embedded:
            return f"embedded PostgreSQL ({embedded.pgdata_dir()})"
        pooled = ", through a transaction pooler" if self.pooled else ""
        return f"external PostgreSQL (LORE_DATABASE_URL or [database] url{pooled})"


def target(
    config_url: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    start: bool = True,
    release: bool = False,
    listen_url: str | None = None,
    pooler: str | None = None,
) -> Target:
    """`LORE_DATABASE_URL`, else `[database] url`, else the embedded server (started on demand,
    unless `lore db stop` holds it stopped and this is not the user asking: see embedded.HELD).
    An external URL gets its plan: pooled or not, and where LISTEN goes (`listen_url`, `pooler`:
    the config's `[database]` keys; the environment wins)."""
    env = os.environ if env is None else env
    url = locate.configured(env, config_url)
    if url:
        return Target(url, embedded=False, plan=choose(url, env, listen_url, pooler))
    if start:
        url = embedded.start(env, release=release)
    else:
        running = embedded.running_url(env)
        if running is None:
            raise DatabaseError("The embedded PostgreSQL is not running.", "Start it with `lore db start`.")
        url = running
    # The embedded server is never behind a pooler: LISTEN goes to it, unless turned off.
    off = (env.get("LORE_LISTEN_URL") or listen_url or "").strip().lower() == LISTEN_OFF
    plain = {"LORE_DATABASE_POOLER": "none", "LORE_LISTEN_URL": LISTEN_OFF if off else ""}
    return Target(url, embedded=True, plan=choose(url, plain))


def connect(
    url: str, *, autocommit: bool = False, connect_timeout: int = 10, pooled: bool = False
) -> psycopg.Connection:
    """A connection; `pooled` (through a transaction pooler): no server-side prepared statements."""
    try:
        if pooled:
            return psycopg.connect(
                url, autocommit=autocommit, connect_timeout=connect_timeout, prepare_threshold=None
            )
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
    except (
        psycopg.errors.DiskFull
    ) as exc:  # SQLSTATE 53100: the statement failed, its transaction rolled back
        raise DatabaseError(
            "PostgreSQL's disk is full (SQLSTATE 53100): nothing was written.",
            "Free space on the disk that holds the database (`lore doctor` shows where it is; for the "
            "embedded database, the data dir), then call again.",
        ) from exc
    except psycopg.OperationalError as exc:
        raise DatabaseError(
            f"Lost the connection to PostgreSQL: {redact(str(exc)).strip().splitlines()[0]}",
            LOST_HINT,
        ) from exc


# A connection lost during a write may have lost it after PostgreSQL committed it (the answer to the
# COMMIT never came): lore does not know, so it says how to find out before writing it again.
LOST_HINT = (
    "If this was a write, it may have been saved before the connection dropped: look for it first "
    "(recall_facts, search_notes or read_messages; in a terminal `lore facts list`, `lore search`, "
    "`lore tasks`, `lore messages`) and write it again only if it is missing. A read can simply be "
    "retried. If it persists run `lore doctor` (for the embedded database: `lore db start`)."
)
