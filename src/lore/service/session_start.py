"""Session start: the memory an agent gets before its first prompt. One use case for the hosted hook
(`/api/session-start`) and `lore session-start`; the local hook makes the same read through psql
(lore.db.snapshot) and the same text (lore.core.session_start.compose), so all three agree."""

from __future__ import annotations

from dataclasses import dataclass

from lore.core import render
from lore.core.clients import CLIENTS
from lore.core.errors import InvalidInput
from lore.core.session import SessionContext
from lore.core.session_start import Snapshot, compose, request
from lore.service.runtime import Runtime
from lore.store import snapshot


@dataclass(frozen=True)
class Started:
    rendered: render.Rendered
    snapshot: Snapshot

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


def session_start(rt: Runtime, session: SessionContext, client: str) -> Started:
    config = rt.config()
    wanted = request(session, config, client_of(client))
    snap = rt.transact(lambda c: snapshot.read(c, wanted))
    return Started(compose(snap, session, config, client), snap)
