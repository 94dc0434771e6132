"""The agent events for callers that hold a Runtime (`/api/hooks/*` for the hosted hooks, `lore
session-start`, the web UI): the use cases of lore.service.events on a pooled psycopg connection, in
one transaction each. The local hooks call the same use cases through psql."""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from lore.core import injection, outcomes, spool, workspace
from lore.core.clients import CLIENTS
from lore.core.ending import Ending
from lore.core.errors import InvalidInput
from lore.core.rows import Handoff
from lore.core.session import SessionContext
from lore.service.events import prompt, records, session_end
from lore.service.events import session_start as starting
from lore.service.events.prompt import Arrived, Seen
from lore.service.events.records import outcome_row
from lore.service.events.session_start import Started
from lore.store.port import ConnPort

if TYPE_CHECKING:
    import psycopg

    from lore.core.config import Config

T = TypeVar("T")


class Runs(Protocol):
    """What these use cases read of the lore.service.runtime.Runtime they are given (it replays the
    spool through this module, so this module names what it needs instead of importing it)."""

    @property
    def env(self) -> Mapping[str, str]: ...

    @property
    def accounts(self) -> object | None: ...

    def config(self) -> Config: ...

    def transact(self, fn: Callable[[psycopg.Connection], T]) -> T: ...


__all__ = [
    "Arrived",
    "Seen",
    "Started",
    "client_of",
    "ended",
    "outcome_row",
    "prompted",
    "record",
    "replay_spool",
    "replayed_row",
    "session_start",
    "with_root",
]


def client_of(value: object) -> str:
    """A hook client name, checked (the output shape and the budget depend on it)."""
    if not isinstance(value, str) or value not in CLIENTS:
        raise InvalidInput(f"unknown client {str(value)[:40]!r}", f"use one of: {', '.join(sorted(CLIENTS))}")
    return value


def with_root(session: SessionContext, root: object, name: object = None) -> SessionContext:
    """`session` with "here" (its root: the git top-level the client found on its machine) and the
    workspace's name as the client tells them, when the root is the workspace or one of its parents
    (a hosted server cannot look at the client's disk); else `session` unchanged."""
    if not isinstance(root, str) or not root.startswith("/") or not workspace.is_path(root):
        return session
    given = Path(os.path.normpath(root))
    if given != session.signal.path and given not in Path(os.path.normpath(session.signal.path)).parents:
        return session
    label = name if isinstance(name, str) and 0 < len(name) <= 255 and "/" not in name else given.name
    return dataclasses.replace(session, root=given, workspace_name=label or session.workspace_name)


def session_start(
    rt: Runs, session: SessionContext, client: str, *, via: str, session_id: str | None = None
) -> Started:
    """The session-start text for `client` here, and its record, in one transaction. `via`: `api`
    (the hosted hook), `cli` (`lore session-start`)."""
    started = time.monotonic()
    config = rt.config()
    check = rt.accounts is None  # sign-in mode: the session's paths name the user's machine
    return rt.transact(
        lambda conn: starting.session_start(
            ConnPort(conn),
            session,
            config,
            client_of(client),
            via=via,
            session_id=session_id,
            started=started,
            check_paths=check,
        )
    )


def prompted(
    rt: Runs, session: SessionContext, client: str, seen: Seen, *, via: str, session_id: str | None = None
) -> Arrived:
    """What arrived since `seen` (the hosted per-prompt hook), and its record."""
    started = time.monotonic()
    config = rt.config()
    return rt.transact(
        lambda conn: prompt.prompt(
            ConnPort(conn),
            session,
            config,
            client_of(client),
            seen,
            via=via,
            session_id=session_id,
            started=started,
        )
    )


def ended(rt: Runs, session: SessionContext, ending: Ending) -> Handoff:
    """The hosted session end: the handoff the developer's machine captured, in this session's space."""
    return rt.transact(lambda conn: session_end.session_end(ConnPort(conn), session, ending))


def record(rt: Runs, row: dict[str, object]) -> int:
    """One outcome record (the hosted hooks' failures, replayed from their spool)."""
    retention = rt.config().retention_days
    return rt.transact(lambda conn: records.record(ConnPort(conn), row, retention))


def replay_spool(rt: Runs, *, limit: int = 50) -> spool.Replayed:
    """Write what this machine's hooks kept in the spool while the database was down (local mode)."""
    retention = rt.config().retention_days

    def deliver(entry: spool.Entry) -> None:
        rt.transact(lambda conn: records.deliver(ConnPort(conn), entry, retention))

    return spool.replay(rt.env, spool.LOCAL, deliver, limit=limit)


_TEXTS = ("client", "session_id", "workspace", "text", "detail", "at", "event_key")


def replayed_row(payload: dict[str, Any], spaces: Sequence[str], user: str | None) -> dict[str, Any]:
    """A record a hosted hook kept in its spool, as it may be written here: its fields checked, its
    space one of the caller's (else none), its owner the caller."""
    kind, outcome = payload.get("kind"), payload.get("outcome")
    if kind not in injection.EVENTS or outcome not in outcomes.KINDS:
        raise InvalidInput(
            "the record's kind or outcome is not one lore writes", "send what the hook's spool holds"
        )
    row: dict[str, Any] = {"kind": kind, "outcome": outcome, "via": "hook"}
    for key in _TEXTS:
        value = payload.get(key)
        row[key] = value if isinstance(value, str) else None
    row["client"] = row["client"] or "unknown"
    row["workspace"] = row["workspace"] or ""
    row["text"] = row["text"] or ""
    space = payload.get("space")
    row["space"] = space if isinstance(space, str) and space in spaces else None
    row["readable"] = [row["space"]] if row["space"] else []
    duration = payload.get("duration_ms")
    row["duration_ms"] = duration if isinstance(duration, int) and 0 <= duration < 2**31 else 0
    row["owner"] = user
    return row
