"""Session start: the memory an agent gets before its first prompt. One use case for the hosted hook
(`/api/session-start`) and `lore session-start`; the local hook makes the same read through psql
(lore.db.snapshot) and the same text (lore.core.session_start.compose), so all three agree."""

from __future__ import annotations

import time
from dataclasses import dataclass

import psycopg

from lore.core import injection, render
from lore.core.clients import CLIENTS
from lore.core.errors import InvalidInput
from lore.core.session import SessionContext
from lore.core.session_start import Snapshot, compose, request
from lore.service.runtime import Runtime
from lore.store import injections, snapshot


@dataclass(frozen=True)
class Started:
    rendered: render.Rendered
    snapshot: Snapshot
    record: int | None = None  # the id of its record (`lore log show ID`); None: nothing injected

    @property
    def text(self) -> str:
        return self.rendered.text

    @property
    def total(self) -> int:
        return self.snapshot.total


def client_of(value: object) -> str:
    """A hook client name, checked (the output shape and the budget depend on it)."""
    if not isinstance(value, str) or value not in CLIENTS:
        raise InvalidInput(f"unknown client {str(value)[:40]!r}", f"use one of: {', '.join(sorted(CLIENTS))}")
    return value


def session_start(
    rt: Runtime, session: SessionContext, client: str, *, via: str, session_id: str | None = None
) -> Started:
    """The text for `client` here, read and recorded (`lore log`) in one transaction. `via`: who
    asks (`api`: the hosted hook; `cli`: `lore session-start`)."""
    started = time.monotonic()
    config = rt.config()
    wanted = request(session, config, client_of(client))

    def read(conn: psycopg.Connection) -> tuple[Snapshot, render.Rendered, int | None]:
        snap = snapshot.read(conn, wanted)
        # Sign-in mode: the session's paths name the user's machine, which the server cannot see.
        out = compose(snap, session, config, client, check_paths=rt.accounts is None)
        made = None
        if out.text:
            row = injection.session_start_row(
                snap,
                out,
                session,
                client,
                via=via,
                session_id=session_id[:200] if session_id else None,
                budget=render.clamp_budget(config.session_start_max_chars, client),
                duration_ms=int((time.monotonic() - started) * 1000),
            )
            with conn.transaction():
                made = injections.record(conn, row, config.retention_days)
        return snap, out, made

    snap, out, made = rt.transact(read)
    return Started(out, snap, made)
