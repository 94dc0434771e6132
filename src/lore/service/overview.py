"""Overviews of a person's spaces, read-only: what each holds, which workspaces wrote into it, which
one was used last, what was forgotten (and by whom, why). For the web UI and `lore doctor`."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from lore.core.rows import Counts, Forgotten, Seen
from lore.service.runtime import Runtime
from lore.store import overview


def spaces(rt: Runtime, ids: Sequence[str]) -> tuple[dict[str, Counts], list[Seen]]:
    """(counts per space, the workspaces that wrote into them, most recent first)."""
    return rt.transact(lambda c: (overview.counts(c, ids), overview.workspaces_seen(c, ids)))


def last_used(rt: Runtime, ids: Sequence[str]) -> str | None:
    """The space of `ids` written to most recently, or None when none holds anything yet."""
    return rt.transact(lambda c: overview.last_used(c, ids))


def forgotten(
    rt: Runtime, spaces: Sequence[str], *, kind: str | None = None, lineage: int | None = None
) -> list[Forgotten]:
    return rt.transact(lambda c: overview.forgotten(c, spaces, kind=kind, lineage=lineage))


def workspaces_seen(conn: psycopg.Connection, limit: int = 10) -> list[Seen]:
    """The workspaces written from lately, into any space (`lore doctor`, on its own connection)."""
    return overview.workspaces_seen(conn, None, limit=limit)
