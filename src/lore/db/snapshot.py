"""The session-start read of the hooks: `lore_session_snapshot` (migration 0012) through psql, the
same SQL function /api/session-start and `lore session-start` call through psycopg
(lore.store.snapshot), parsed and rendered by lore.core.session_start for all of them."""

from __future__ import annotations

from lore.core.errors import StoreError
from lore.core.session_start import Request, Snapshot, parse
from lore.db.psql import psql_json

_SQL = r"""
\set ON_ERROR_STOP on
SET statement_timeout = :timeout_ms;
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


def read(url: str, wanted: Request, *, timeout: float) -> Snapshot:
    """The session-start snapshot, in one psql call."""
    variables = {
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
    document = psql_json(url, _SQL, variables, timeout=timeout)
    if document is None:
        raise StoreError(
            "the database's schema is older than this lore: run any `lore` command (`lore doctor`) "
            "to upgrade it"
        )
    return parse(document)
