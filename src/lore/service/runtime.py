"""The runtime: what every entry point needs, built once per process (`lore mcp`, `lore serve`, a
`lore` command): the config as it is now, the database pool, the retrieval machinery, the one
LISTEN connection that waiting senders share, the client-name audit and, in sign-in mode, the
accounts and who the current request is. Adapters (MCP tools, /api, the web UI, the CLI) parse
their input, call a use case of lore.service with it, and format the result.
"""

from __future__ import annotations

import logging
import os
import random
import select
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, TypeVar
from urllib.parse import unquote, urlparse

import anyio
import psycopg
from psycopg_pool import ConnectionPool

from lore.core import outcomes
from lore.core.clients import canonical
from lore.core.config import Config, LiveConfig, file_signature
from lore.core.errors import ConfigError, Conflict, DatabaseError, LoreError, Refused
from lore.core.redact import redact
from lore.core.session import SessionContext, build
from lore.core.workspace import WorkspaceSignal, choose_workspace
from lore.db import connect as db
from lore.db import embedded
from lore.service import metrics
from lore.store import client_names
from lore.store.replies import Replies

if TYPE_CHECKING:
    from lore.store.accounts import Accounts

log = logging.getLogger("lore.service.runtime")
# A workspace a client names (header, API parameter) resolves to the same session for this long,
# for the same config: an HTTP client names it on every call, and resolving it (realpath, git) was a
# tenth of a call's CPU (docs/benchmarks.md, HTTP floors). A moved folder or a new remote is seen
# after at most this long; a config change at once (a new Config is a new key).
RESOLVE_TTL = 2.0
# A pooled connection handed back less than this long ago is handed out again without a check
# round trip; an older one is checked first (a database restart closes every connection).
CHECK_AFTER = 5.0
T = TypeVar("T")
P = ParamSpec("P")
MAX_NAMES_SEEN = 1000
# The backstop of LISTEN: how often waiting for replies (and `lore listen`) looks at the tables
# anyway; without LISTEN (a transaction pooler and no listen URL) the poll is all there is.
POLL_SECONDS = 5.0
POLL_ALONE_SECONDS = 1.0
# The HTTP header a client names its workspace with (MCP over HTTP, /api, the hosted hook).
WORKSPACE_HEADER = "x-lore-workspace"
# The git remotes of that workspace, comma-separated, when the client can tell them: in sign-in mode
# the server never looks at a path on its own disk, so this is all its remote rule sees.
REMOTE_HEADER = "x-lore-remote"


@dataclass
class Runtime:
    """Config, database pool and retrieval for one process; in sign-in mode, per-request users."""

    env: Mapping[str, str]
    transport: Literal["stdio", "http", "cli"]
    workspace_arg: str | None = None
    cwd: str = field(default_factory=os.getcwd)
    _live: LiveConfig = field(init=False)
    _pool: ConnectionPool | None = None
    _target: db.Target | None = None
    _embedded: bool = False  # the pool is the embedded server's (which `lore db stop` can hold)
    _pool_lock: threading.Lock = field(default_factory=threading.Lock)
    # Sign-in mode (`lore serve --sign-in`): each request's user and their config from the database.
    accounts: Accounts | None = None
    # lore.service.retrieval: the embedder (loaded lazily) and the background embedding worker.
    retrieval: Any = None
    # Sign-in mode: who the current request is (the HTTP layer sets it: the bearer token's subject).
    identity: Callable[[], str | None] | None = None
    # Commands that move a whole database (export, import, purge) need no usable config file.
    config_optional: bool = False
    # stdio serves one session per process: its id, so that it never reads its own messages.
    stdio_session: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    # Every send_message that waits shares one LISTEN connection (attached by the server's lifespan).
    replies: Replies = field(init=False)
    # Client names already in the client_names audit (written once per name and process).
    _names_seen: set[str] = field(default_factory=set)

    # (workspace, rule, source, remotes) -> (config, when, session): see RESOLVE_TTL.
    _resolved: dict[tuple[str, str, str, str | None], tuple[Config, float, SessionContext]] = field(
        default_factory=dict
    )
    # id(connection) -> when it was last handed back to the pool: see CHECK_AFTER.
    _returned: dict[int, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._live = LiveConfig(self.env)
        self.replies = Replies(
            self.listen_url,
            self.run,
            per_user=int(self.env.get("LORE_USER_MAX_WAITS", "16")),
            total=int(self.env.get("LORE_MAX_WAITS", "1000")),
            poll_seconds=poll_seconds(self.env),
            poll_alone_seconds=poll_seconds(self.env, listening=False),
            on_event=metrics.listen_event,
        )

    def database_url(self) -> str:
        """The pool's connection string."""
        info = self.pool().conninfo
        return str(info() if callable(info) else info)

    def target(self) -> db.Target:
        """Which database, and its plan: through a transaction pooler or not, where LISTEN goes."""
        self.pool()
        assert self._target is not None
        return self._target

    def listen_url(self) -> str | None:
        """Where a LISTEN connection of this process goes (lore.core.pooling): the database URL, a
        direct URL beside a transaction pooler (`LORE_LISTEN_URL`), or None: nowhere (replies and
        arrivals are found by the poll alone)."""
        return self.target().listen_url

    def sign_in(self, identity: Callable[[], str | None]) -> None:
        """Sign-in mode: each request's user (`identity()`, given by the HTTP layer) and their config
        from the database (lore.store.accounts), instead of the local config file."""
        from lore.store.accounts import Accounts

        self.accounts = Accounts(self.pool)
        self.identity = identity

    def user(self) -> str | None:
        """The signed-in user of the current request in sign-in mode; None in local mode."""
        if self.accounts is None:
            return None
        subject = self.identity() if self.identity is not None else None
        if not subject:
            raise Refused("This request is not signed in.", "Send `Authorization: Bearer <lore token>`.")
        return subject

    def config(self) -> Config:
        if self.accounts is not None:
            return self.accounts.get(self.user() or "").config
        return self._local_config()

    def _local_config(self) -> Config:
        """The config file as it is now: one os.stat per call, parsed again when it changed. An
        invalid file raises its ConfigError (file, line, fix), never the last good config."""
        live, loads = self._live, self._live.loads
        try:
            config = live.get()
        except ConfigError as exc:
            if live.loads != loads:
                log.warning("config %s is not usable: %s", live.path, exc.message)
            raise
        if loads and live.loads != loads:
            log.info("config %s changed: read again (spaces: %s)", live.path, ", ".join(config.ids))
        return config

    def pool(self) -> ConnectionPool:
        """Opened on first use (so `initialize` never waits for the database), migrated once; then
        the writes this machine's hooks kept in the spool while the database was down are written
        (local mode: a server in sign-in mode has no hooks of its own)."""
        with self._pool_lock:
            opened = self._pool is None
            pool = self._open_pool() if opened else self._pool
        assert pool is not None
        if opened and self.accounts is None:
            self._replay_spool()
        return pool

    def _replay_spool(self) -> None:
        from lore.core import spool

        if not spool.pending(self.env):
            return
        from lore.service.session_start import replay_spool

        try:
            done = replay_spool(self)
        except Exception:  # never stop a process over what its hooks kept: the next one tries
            log.exception("replaying the hooks' spool failed")
            return
        if done.delivered or done.failed:
            log.info("spool: %s writes of this machine's hooks written, %s left", done.delivered, done.failed)

    def _open_pool(self) -> ConnectionPool:
        """The pool to the migrated database (under the pool lock)."""
        from lore.service import database

        listen_url, pooler = self._database_settings()
        target = database.ready(self.env, self._configured_url(), listen_url=listen_url, pooler=pooler)
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

    def _database_settings(self) -> tuple[str | None, str | None]:
        """`[database] listen_url` and `pooler` of the config file, when there is a usable one."""
        config = self._optional_config()
        return (config.database_listen_url, config.database_pooler) if config is not None else (None, None)

    def _configured_url(self) -> str | None:
        if self.accounts is None and not self.config_optional:
            return self._local_config().database_url
        # A server in sign-in mode, and the commands that move a whole database (tokens, export,
        # import, purge), need no config file: LORE_DATABASE_URL is enough.
        config = self._optional_config()
        return config.database_url if config is not None else None

    def _optional_config(self) -> Config | None:
        """The config file when there is a usable one. No file is no config, said nowhere (a server
        host needs none); a file that is there and broken is still logged."""
        if file_signature(self._live.path) is None:
            return None
        try:
            return self._local_config()
        except ConfigError:
            return None

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
        if self.retrieval is not None:
            self.retrieval.close()
        if self._pool is not None:
            self._pool.close()

    def transact(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """`fn(conn)` on a pooled connection, with database errors translated (lore.db.connect); run
        again (up to three times) when PostgreSQL rolled it back whole (a deadlock between two
        sessions' writes: nothing was written, so running it again is safe)."""
        for attempt in range(3):
            try:
                with db.translated(), self.connection() as conn:
                    return fn(conn)
            except Conflict as exc:
                if attempt == 2 or not isinstance(exc.__cause__, db.ROLLED_BACK):
                    raise
                time.sleep(random.uniform(0.01, 0.1) * (attempt + 1))
        raise AssertionError("unreachable")

    async def run(self, fn: Callable[[psycopg.Connection], T]) -> T:
        """`transact(fn)` on a worker thread (the event loop never waits on the database)."""
        return await anyio.to_thread.run_sync(self.transact, fn)

    async def call(
        self, use_case: Callable[Concatenate[Runtime, P], T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """A use case of lore.service (a plain function taking this runtime first) on a worker
        thread: what the async adapters (MCP tools, /api, the web UI) do with each call."""
        return await anyio.to_thread.run_sync(lambda: use_case(self, *args, **kwargs))

    def client_id(self, name: str, version: str | None) -> str:
        """lore's id for the name a client gave (`gemini-cli-mcp-client` -> `gemini`): what `source`
        says. The name itself goes into the client_names audit, once per name and process; the
        audit never stops a call (the next session tries again)."""
        if name in self._names_seen:
            return canonical(name)
        if len(self._names_seen) > MAX_NAMES_SEEN:
            self._names_seen.clear()
        try:
            client = self.transact(lambda conn: client_names.record(conn, name, version))
        except Exception as exc:
            log.warning("could not record client name %r: %s", name[:80], exc)
            return canonical(name)
        self._names_seen.add(name)
        return client

    def command_session(self, workspace: str | None, source: str = "cli") -> SessionContext:
        """The session of a `lore` command: `--workspace DIR` (made absolute against the working
        directory) if given, else the same signals as `lore mcp` (the client's variables, then the
        working directory). One rule for every command."""
        if workspace:
            path = Path(os.path.abspath(os.path.join(self.cwd, os.path.expanduser(workspace))))
            signal = WorkspaceSignal(path, "--workspace")
        else:
            signal = choose_workspace(None, self.env, [], self.cwd)
        return build(signal, self.config(), self.env, source)

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """A pooled connection. When none comes in time (the database was killed, restarted or is
        down), the pool is replaced by a fresh one (starting the embedded server again if it is
        not running) and asked once more: a live session recovers by itself, without waiting out
        the old pool's reconnection backoff. Only getting a connection is retried, never a call."""
        pool = self.pool()
        if self._embedded and embedded.held(self.env):  # `lore db stop`: say so, do not wait for it
            self._drop_pool(pool)
            raise DatabaseError(embedded.STOPPED_BY_USER, outcomes.HELD_HINT)
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
                    self._drop_pool(pool)
                    pool = self.pool()
                    conn = pool.getconn(timeout=wait)
        finally:
            metrics.pool_use(waiting=-1)
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

    def _check(self, conn: psycopg.Connection) -> None:
        """The pool's check before it hands out a connection: a round trip, skipped for one in use
        moments ago whose socket has nothing to read. (An idle connection has nothing to read; one
        the server ended, by a restart or `pg_terminate_backend`, has its goodbye or EOF waiting.)"""
        recent = time.monotonic() - self._returned.get(id(conn), 0.0) < CHECK_AFTER
        if recent and not _readable(conn):
            return
        ConnectionPool.check_connection(conn)

    def _drop_pool(self, pool: ConnectionPool) -> None:
        with self._pool_lock:
            if self._pool is pool:
                self._pool = None
        closing = threading.Thread(target=pool.close, kwargs={"timeout": 5}, name="lore-close", daemon=True)
        closing.start()

    async def scope(self) -> tuple[Config, Mapping[str, str], str]:
        """(config, environment to resolve with, cache prefix) for the current request."""
        user = self.user()
        if self.accounts is None or user is None:
            return self.config(), self.env, ""
        account = await self.accounts.fresh(user)
        return account.config, account.env(), f"{user}|{account.version}|"

    async def session_for(
        self, workspace: str, source: str, rule: str, remotes: str | None = None
    ) -> SessionContext:
        """A session for a workspace named by the client (header, API parameter)."""
        config, env, _ = await self.scope()
        signal = WorkspaceSignal(Path(file_path(workspace)), rule)
        # on a worker thread: resolving reads the workspace's git files (never on the event loop)
        return await anyio.to_thread.run_sync(self.resolve, signal, config, env, source, remotes)

    def resolve(
        self,
        signal: WorkspaceSignal,
        config: Config,
        env: Mapping[str, str],
        source: str,
        remotes: str | None = None,
    ) -> SessionContext:
        """The session for a workspace. In sign-in mode the path is the user's, on their machine:
        resolved as written (lore.spaces, lexical), never against this server's disk. The same
        workspace with the same config resolves once per RESOLVE_TTL."""
        key = (str(signal.path), signal.source, source, remotes)
        now = time.monotonic()
        cached = self._resolved.get(key)
        if cached is not None and cached[0] is config and now - cached[1] < RESOLVE_TTL:
            return cached[2]
        if self.accounts is None:
            resolved = build(signal, config, env, source)
        else:
            named = [r.strip() for r in (remotes or "").split(",") if r.strip()][:8]
            resolved = build(signal, config, env, source, lexical=True, remotes=named)
        if len(self._resolved) > 4096:
            self._resolved.clear()
        self._resolved[key] = (config, now, resolved)
        return resolved


def poll_seconds(env: Mapping[str, str], listening: bool = True) -> float:
    """How often a process waiting for replies (and `lore listen`) looks at the tables whatever LISTEN
    says: `LORE_POLL_SECONDS` (0.2 to 60), else 5 s beside LISTEN (the backstop for a notification
    that never came) and 1 s without it (the poll is all there is)."""
    default = POLL_SECONDS if listening else POLL_ALONE_SECONDS
    try:
        value = float(env.get("LORE_POLL_SECONDS", "") or default)
    except ValueError:
        value = default
    return min(60.0, max(0.2, value))


def first_error(group: BaseExceptionGroup) -> BaseException:
    """The first error of a task group (a LoreError stays a LoreError for the caller)."""
    inner = group.exceptions[0]
    return first_error(inner) if isinstance(inner, BaseExceptionGroup) else inner


def _readable(conn: psycopg.Connection) -> bool:
    """Whether the connection's socket has something to read now (no wait, no round trip)."""
    try:
        ready, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(ready)


def file_path(value: str) -> str:
    """A workspace given as a `file://` URI or a plain path, as a path."""
    if value.startswith("file://"):
        return unquote(urlparse(value).path)
    return value
