"""The session-start read of the hooks: `lore_session_snapshot` (migration 0012) through psql, the
same SQL function /api/session-start and `lore session-start` call through psycopg
(lore.store.snapshot), parsed and rendered by lore.core.session_start for all of them; and, in the
same psql process after the read, the record of what was injected (`lore_injection_record`,
migration 0014)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from lore.core.errors import StoreError
from lore.core.session_start import Request, Snapshot, parse
from lore.db.psql import Session, dollar_quoted, psql_json

_SQL = r"""
\set ON_ERROR_STOP on
BEGIN;
SET LOCAL statement_timeout = :timeout_ms;
-- One query a session waits on: parallel workers' start-up costs more than they save (5-10 ms here).
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT to_regproc('lore_session_snapshot') IS NOT NULL AS current \gset
\if :current
SELECT lore_session_snapshot(:'spaces'::text[], :'workspace', :max_rows, :'space', :'root', :handoff_hours,
                             :doing_max, nullif(:'skip', 'none')::text[], :instructions_max);
\else
SELECT 'null';
\endif
"""


def _array(values: tuple[str, ...]) -> str:
    """A text[] literal; every value is a space id or a family name ([A-Za-z0-9_.-]): no quoting."""
    return "{" + ",".join(values) + "}"


def _variables(wanted: Request) -> dict[str, str]:
    return {
        "spaces": _array(wanted.spaces),
        "workspace": wanted.workspace,
        "max_rows": str(wanted.max_rows),
        "space": wanted.space,
        "root": wanted.root,
        "handoff_hours": str(wanted.handoff_hours),
        "doing_max": str(wanted.doing_max),
        "skip": "none" if wanted.skip_families is None else _array(wanted.skip_families),
        "instructions_max": str(wanted.instructions_max),
    }


_OLD_SCHEMA = (
    "the database's schema is older than this lore: run any `lore` command (`lore doctor`) to upgrade it"
)


def read(url: str, wanted: Request, *, timeout: float) -> Snapshot:
    """The session-start snapshot, in one psql call."""
    document = psql_json(url, _SQL + "COMMIT;\n", _variables(wanted), timeout=timeout)
    if document is None:
        raise StoreError(_OLD_SCHEMA)
    return parse(document)


class Reading:
    """A session start's read, and the record of its injection written after it by the same psql."""

    def __init__(self, session: Session, snapshot: Snapshot) -> None:
        self._session, self.snapshot = session, snapshot

    def record(self, row: Mapping[str, Any], retention_days: int, *, timeout: float) -> None:
        """Write the record and end psql, within `timeout` (a StoreError otherwise: the caller logs
        it; the injection itself is not held back by it)."""
        document = dollar_quoted(json.dumps(row, ensure_ascii=False))
        call = f"SELECT lore_injection_record({document}::jsonb, {int(retention_days)});"
        script = (
            "SELECT to_regproc('lore_injection_record') IS NOT NULL AS can_record \\gset\n"
            f"\\if :can_record\n{call}\n\\endif\nCOMMIT;\n"
        )
        self._session.finish(script, timeout=timeout)


@contextmanager
def reading(url: str, wanted: Request, *, timeout: float) -> Iterator[Reading]:
    """`read`, keeping its psql open for `Reading.record`; psql is ended on the way out."""
    with Session(url, _variables(wanted), timeout=timeout) as session:
        document = session.read(_SQL, timeout=timeout)
        if document is None:
            raise StoreError(_OLD_SCHEMA)
        yield Reading(session, parse(document))
