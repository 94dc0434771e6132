"""The database connections of one process: the pool (opened on first use, to the database made
ready and migrated by lore.service.database), each connection checked before it is handed out, a
pool the database dropped replaced by a fresh one, `lore db stop` said at once instead of waited
out, and `transact`: a function on a pooled connection, run again after a deadlock."""

from __future__ import annotations

import logging
import random
import select
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import anyio
import psycopg
from psycopg_pool import ConnectionPool

from lore.core import outcomes
from lore.core.errors import Conflict, DatabaseError, LoreError
from lore.core.redact import redact
from lore.db import connect as db
from lore.db import embedded
from lore.service import metrics

log = logging.getLogger("lore.service.runtime")
# A pooled connection handed back less than this long ago is handed out again without a check
# round trip; an older one is checked first (a database restart closes every connection).
CHECK_AFTER = 5.0
T = TypeVar("T")
P = ParamSpec("P")
# (database URL of the config file, its `[database] listen_url`, its `pooler`), each None when unset
Settings = tuple[str | None, str | None, str | None]


class Transact(Protocol):
    """What a part that writes needs of the connections (`Connections.transact`, `Runtime.transact`):
    `transact(fn, *args, **kwargs)` runs `fn(conn, *args, **kwargs)` in a pooled connection."""

    def __call__(
        self, fn: Callable[Concatenate[psycopg.Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T: ...


class Connections:
    """The pool to this process's database, and the functions that run on its connections.

    `settings()` is asked when the pool opens (and again when it is replaced): what the config file
    says of the database. `opened()` is called once after each new pool opened (outside the lock)."""

    def __init__(self, env: Mapping[str, str], settings: Callable[[], Settings], opened: Callable[[], None]):
        self.env = env
        self._settings = settings
        self._opened = opened
        self._pool: ConnectionPool | None = None
        self._target: db.Target | None = None
        self._embedded = False  # the pool is the embedded server's (which `lore db stop` can hold)
        self._lock = threading.Lock()
        # id(connection) -> when it was last handed back to the pool: see CHECK_AFTER.
        self._returned: dict[int, float] = {}

    def pool(self) -> ConnectionPool:
        """Opened on first use (so `initialize` never waits for the database), migrated once; then
        `opened()` (the runtime writes what this machine's hooks kept in the spool meanwhile)."""
        with self._lock:
            opened = self._pool is None
            pool = self._open() if opened else self._pool
        assert pool is not None
        if opened:
            self._opened()
        return pool

    def target(self) -> db.Target:
        """Which database, and its plan: through a transaction pooler or not, where LISTEN goes."""
        self.pool()
        assert self._target is not None
        return self._target

    def database_url(self) -> str:
        """The pool's connection string."""
        info = self.pool().conninfo
        return str(info() if callable(info) else info)

    def listen_url(self) -> str | None:
        """Where a LISTEN connection of this process goes (lore.core.pooling): the database URL, a
        direct URL beside a transaction pooler (`LORE_LISTEN_URL`), or None: nowhere (replies and
        arrivals are found by the poll alone)."""
        return self.target().listen_url

    def _open(self) -> ConnectionPool:
        """The pool to the migrated database (under the pool lock)."""
        from lore.service import database

        url, listen_url, pooler = self._settings()
        target = database.ready(self.env, url, listen_url=listen_url, pooler=pooler)
        self._embedded = target.embedded
        # Autocommit: a read is one round trip (no BEGIN, no COMMIT); every write runs in
        # its own `conn.transaction()` (all of lore's core does), which commits it.
        kwargs: dict[str, Any] = {"application_name": "lore", "autocommit": True}
        if target.pooled:
            # A transaction pooler hands each transaction to any server connection: nothing
            # prepared on one exists on the next, and it refuses the `options` startup
            # parameter (statement_timeout then comes from the role: docs/deploy.md).
            kwargs["prepare_threshold"] = None
        else:
            kwargs["options"] = "-c statement_timeout=30000"
        self._pool = ConnectionPool(
            target.url,
            min_size=1,
            max_size=int(self.env.get("LORE_POOL_SIZE", "4")),
            check=self._check,
            kwargs=kwargs,
            open=True,
            name="lore",
        )
        self._target = target
        return self._pool

    def warm(self) -> None:
        """Start the database in the background so the first tool call does not wait for it."""

        def run() -> None:
            try:
                self.pool()
            except LoreError as exc:
                log.warning("database not ready yet: %s", exc.message)
            except Exception:  # never let warm-up kill the server; the first call reports it
                log.exception("database warm-up failed")

        threading.Thread(target=run, name="lore-warm", daemon=True).start()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()

    def transact(
        self, fn: Callable[Concatenate[psycopg.Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`fn(conn, *args, **kwargs)` on a pooled connection, with database errors translated
        (lore.db.connect); run again (up to three times) when PostgreSQL rolled it back whole (a
        deadlock between two sessions' writes: nothing was written, so running it again is safe)."""
        for attempt in range(3):
            try:
                with db.translated(), self.connection() as conn:
                    return fn(conn, *args, **kwargs)
            except Conflict as exc:
                if attempt == 2 or not isinstance(exc.__cause__, db.ROLLED_BACK):
                    raise
                time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))
        raise AssertionError("unreachable")

    async def run(
        self, fn: Callable[Concatenate[psycopg.Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`transact(fn, *args, **kwargs)` on a worker thread (the event loop never waits on the
        database)."""
        return await anyio.to_thread.run_sync(lambda: self.transact(fn, *args, **kwargs))

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection. When none comes in time (the database was killed, restarted or is
        down), the pool is replaced by a fresh one (starting the embedded server again if it is
        not running) and asked once more: a live session recovers by itself, without waiting out
        the old pool's reconnection backoff. Only getting a connection is retried, never a call."""
        pool = self.pool()
        if self._embedded and embedded.held(self.env):  # `lore db stop`: say so, do not wait for it
            self._drop(pool)
            raise DatabaseError(embedded.STOPPED_BY_USER, outcomes.HELD_HINT)
        pool, conn = self._get(pool)
        if metrics.ENABLED:
            metrics.pool_size(pool.get_stats().get("pool_size", 0), pool.max_size)
        metrics.pool_use(in_use=1)
        try:
            with conn:
                yield conn
        finally:
            metrics.pool_use(in_use=-1)
            if len(self._returned) > 1024:
                self._returned.clear()
            self._returned[id(conn)] = time.monotonic()
            pool.putconn(conn)

    def _get(self, pool: ConnectionPool) -> tuple[ConnectionPool, psycopg.Connection]:
        """A connection from `pool`, or from a fresh pool when the database went away: (the pool it
        came from, the connection)."""
        wait = float(self.env.get("LORE_POOL_TIMEOUT", "10"))
        metrics.pool_use(waiting=1)
        try:
            try:
                conn = pool.getconn(timeout=min(wait, 3.0))
            except psycopg.OperationalError as exc:  # PoolTimeout included
                stats = pool.get_stats()
                if stats.get("pool_size", 0) >= pool.max_size and not stats.get("pool_available", 0):
                    conn = pool.getconn(timeout=wait)  # every connection is busy: the database is fine
                else:
                    log.warning("no database connection (%s); reconnecting", redact(str(exc)).splitlines()[0])
                    self._drop(pool)
                    pool = self.pool()
                    conn = pool.getconn(timeout=wait)
        finally:
            metrics.pool_use(waiting=-1)
        return pool, conn

    def _check(self, conn: psycopg.Connection) -> None:
        """The pool's check before it hands out a connection: a round trip, skipped for one in use
        moments ago whose socket has nothing to read. (An idle connection has nothing to read; one
        the server ended, by a restart or `pg_terminate_backend`, has its goodbye or EOF waiting.)"""
        recent = time.monotonic() - self._returned.get(id(conn), 0.0) < CHECK_AFTER
        if recent and not _readable(conn):
            return
        ConnectionPool.check_connection(conn)

    def _drop(self, pool: ConnectionPool) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        closing = threading.Thread(target=pool.close, kwargs={"timeout": 5}, name="lore-close", daemon=True)
        closing.start()


def _readable(conn: psycopg.Connection) -> bool:
    """Whether the connection's socket has something to read now (no wait, no round trip)."""
    try:
        ready, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(ready)
