"""The runtime: what every entry point needs, built once per process (`lore mcp`, `lore serve`, a
`lore` command). Adapters (MCP tools, /api, the web UI, the CLI) parse their input, call a use case
of lore.service with it (`await rt.call(use_case, ...)`, or `use_case(rt, ...)` on a thread of their
own), and format the result.

A Runtime composes parts with one reason to change each, and hands them out:

- `rt.connections` (runtime.connections): the database pool, `transact` and `run`;
- `rt.configs` (runtime.configs): the config of the call, the local file's or the signed-in user's;
- `rt.sessions` (runtime.sessions): a workspace resolved to a session; `rt.clients`: client ids;
- `rt.replies` (runtime.listeners): the one LISTEN connection waiting senders share;
- `rt.retrieval`: the embedder and its background worker (lore.service.retrieval creates it);
- the metrics are lore.service.metrics (process-wide).

`rt.transact`, `rt.config()`, `rt.command_session()`... are the parts' own functions handed on
(set in `__init__`), for the use cases and adapters that take a whole Runtime.

Following a call: `await rt.call(use_case, *args)` runs `use_case(rt, *args)` and
`rt.transact(fn, *args)` runs `fn(conn, *args)`; the callee is the first argument, typed
(ParamSpec: the type checker holds the arguments to the callee's own). Where a lambda stands there
(`rt.transact(lambda conn: facts.remember(conn, ...))`), the store function inside it is the callee.
"""

from __future__ import annotations

import copy
import logging
import os
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Concatenate, Literal, ParamSpec, TypeVar

import anyio

from lore.service.runtime.configs import Configs
from lore.service.runtime.connections import Connections
from lore.service.runtime.listeners import poll_seconds, replies
from lore.service.runtime.sessions import REMOTE_HEADER, WORKSPACE_HEADER, ClientNames, Sessions, file_path
from lore.store.replies import Replies

if TYPE_CHECKING:
    import psycopg

    from lore.store.accounts import Accounts
    from lore.store.embed_worker import Retrieval

__all__ = ["REMOTE_HEADER", "WORKSPACE_HEADER", "Runtime", "file_path", "first_error", "poll_seconds"]

log = logging.getLogger("lore.service.runtime")
T = TypeVar("T")
P = ParamSpec("P")


class Runtime:
    """Config, database pool and retrieval for one process; in sign-in mode, per-request users."""

    def __init__(
        self,
        env: Mapping[str, str],
        transport: Literal["stdio", "http", "cli"],
        workspace_arg: str | None = None,
        cwd: str | None = None,
        *,
        config_optional: bool = False,
    ) -> None:
        self.env = env
        self.transport = transport
        self.workspace_arg = workspace_arg
        self.cwd = os.getcwd() if cwd is None else cwd
        # stdio serves one session per process: its id, so that it never reads its own messages.
        self.stdio_session = uuid.uuid4().hex[:16]
        # lore.service.retrieval: the embedder (loaded lazily) and the background embedding worker.
        self.retrieval: Retrieval | None = None
        self.configs = Configs(env, optional=config_optional)
        self.connections = Connections(env, self.configs.database, self._opened)
        self.sessions = Sessions(env, self.cwd, self.configs)
        self.clients = ClientNames(self.connections.transact)
        # Every send_message that waits shares one LISTEN connection (attached by the server's lifespan).
        self.replies: Replies = replies(env, self.connections.listen_url, self.connections.run)
        # The parts' own functions, under the names the use cases and adapters call them by (a
        # reader's "go to definition" lands in the part that does the work):
        connections, configs, sessions = self.connections, self.configs, self.sessions
        self.transact = connections.transact  # `fn(conn, *args, **kwargs)` on a pooled connection
        self.run = connections.run  # the same on a worker thread (the event loop never waits)
        self.connection = connections.connection  # a pooled connection (a context manager)
        self.pool = connections.pool  # opened on first use, migrated once
        self.target = connections.target  # which database, and its plan (pooler, LISTEN)
        self.database_url = connections.database_url  # the pool's connection string
        self.listen_url = connections.listen_url  # where this process's LISTEN goes, if anywhere
        self.warm = connections.warm  # start the database in the background
        self.user = configs.user  # the signed-in user of the request (sign-in mode), else None
        self.config = configs.current  # the config of the current call
        self.scope = configs.scope  # (config, environment, cache prefix) of the current request
        self.command_session = sessions.command_session  # a `lore` command's session
        self.session_for = sessions.session_for  # a session for a workspace a client names
        self.resolve = sessions.resolve  # a workspace signal to a session, cached for a moment
        self.client_id = self.clients.client_id  # lore's id for the name a client gave

    # --- running use cases ----------------------------------------------------------------------

    async def call(
        self, use_case: Callable[Concatenate[Runtime, P], T], /, *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`use_case(self, *args, **kwargs)` on a worker thread: what the async adapters (MCP tools,
        /api, the web UI) do with each call. `use_case` is a plain function of lore.service taking
        this runtime first, named at the call site (`await rt.call(work.file_task, here, title, body)`
        calls `lore.service.work.file_task`); the type checker holds the arguments to its own."""
        return await anyio.to_thread.run_sync(lambda: use_case(self, *args, **kwargs))

    def pinned(self, conn: psycopg.Connection) -> Runtime:
        """This runtime, every transaction of which is `conn`'s current one: the use cases a web page
        or a form is made of run as one unit (one connection, one snapshot; an error rolls back all
        of it). The process's retrieval, configs and sessions are shared, not copied."""
        same = copy.copy(self)

        def transact(
            fn: Callable[Concatenate[psycopg.Connection, P], T], /, *args: P.args, **kwargs: P.kwargs
        ) -> T:
            return fn(conn, *args, **kwargs)

        same.transact = transact
        return same

    # --- the database opened, and closing ------------------------------------------------------

    def _opened(self) -> None:
        """A new pool opened: in local mode, the writes this machine's hooks kept in the spool while
        the database was down are written (a server in sign-in mode has no hooks of its own)."""
        if self.accounts is not None:
            return
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

    def close(self) -> None:
        if self.retrieval is not None:
            self.retrieval.close()
        self.connections.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # --- the config, and whose it is ---------------------------------------------------------

    @property
    def config_optional(self) -> bool:
        """Commands that move a whole database (export, import, purge) need no usable config file."""
        return self.configs.optional

    @config_optional.setter
    def config_optional(self, value: bool) -> None:
        self.configs.optional = value

    @property
    def accounts(self) -> Accounts | None:
        """Sign-in mode: each request's user and their config from the database; None in local mode."""
        return self.configs.accounts

    @property
    def identity(self) -> Callable[[], str | None] | None:
        """Sign-in mode: who the current request is (the bearer token's subject)."""
        return self.configs.identity

    def sign_in(self, identity: Callable[[], str | None]) -> None:
        """Sign-in mode: each request's user (`identity()`, given by the HTTP layer) and their config
        from the database (lore.store.accounts), instead of the local config file."""
        from lore.store.accounts import Accounts

        self.configs.sign_in(Accounts(self.connections.pool), identity)


def first_error(group: BaseExceptionGroup) -> BaseException:
    """The first error of a task group (a LoreError stays a LoreError for the caller)."""
    inner = group.exceptions[0]
    return first_error(inner) if isinstance(inner, BaseExceptionGroup) else inner
