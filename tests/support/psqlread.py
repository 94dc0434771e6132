"""The session-start snapshot as the local hook reads it: through psql (lore.db.psql.PsqlPort) and the
SQL function the use case calls (lore.db.calls.SNAPSHOT), for tests that compare it with psycopg."""

from __future__ import annotations

import time

from lore.core.session_start import Request, Snapshot, parse
from lore.db.calls import SNAPSHOT
from lore.db.psql import PsqlPort


def psql_snapshot(url: str, wanted: Request, *, timeout: float = 10) -> Snapshot:
    with PsqlPort(url, deadline=time.monotonic() + timeout) as port:
        document = port.call(SNAPSHOT, *wanted.arguments())
        port.commit()
    return parse(document)
