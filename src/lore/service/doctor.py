"""What `lore doctor` checks of this machine's database (reachable, who else can reach it, the pooler and
LISTEN, pgvector, the schema, where agents wrote from): one line each, OK, WARN or FAIL, with the fix.
The doctor's other checks (config, paths, hooks, clients) need no database and stay in lore.cli.setup."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lore.core.config import Config
from lore.core.errors import LoreError

Lines = list[tuple[str, str]]


def database(config: Config, env: Mapping[str, str]) -> Lines:
    lines: Lines = []
    _database(config, env, lines)
    return lines


def _database(config: Config, env: Mapping[str, str], lines: Lines) -> None:
    from lore.db import connect, health, migrate

    try:
        target = connect.target(
            config.database_url, env, listen_url=config.database_listen_url, pooler=config.database_pooler
        )
        conn = connect.connect(target.url, connect_timeout=5, pooled=target.pooled)
    except LoreError as exc:
        lines.append(("FAIL", f"database: {exc.message} → {exc.hint}"))
        return
    with conn:
        lines.append(("OK", f"database reachable: {target.describe()}"))
        if target.embedded:
            _embedded_access(conn, lines)
        _pooler(target, conn, lines)
        installed, available = health.pgvector(conn)
        if installed:
            lines.append(("OK", f"pgvector {installed} installed"))
        elif available:
            lines.append(
                ("WARN", "pgvector available but not installed yet → run `lore db start` (migrates)")
            )
        else:
            lines.append(
                (
                    "FAIL",
                    "pgvector is not available on this server → install pgvector, or use the "
                    "embedded database (unset LORE_DATABASE_URL)",
                )
            )
        version, latest = migrate.current_version(conn), migrate.latest_version()
        if version == latest:
            lines.append(("OK", f"schema current (version {version})"))
        else:
            lines.append(
                ("FAIL", f"schema version {version}, expected {latest} → run `lore db start` (migrates)")
            )
            return
        _seen_workspaces(conn, config, env, lines)


def _pooler(target: Any, conn: Any, lines: Lines) -> None:
    """Through a transaction pooler or not (and why), the statement timeout there, and whether
    LISTEN hears a notification where it would listen (docs/deploy.md, Managed PostgreSQL)."""
    from lore.core.pooling import LISTEN_HINT
    from lore.core.redact import redact
    from lore.db import health

    plan = target.plan
    if plan is None:
        return
    if plan.pooled:
        lines.append(("OK", f"through a transaction pooler ({plan.why}): no server-side prepared statements"))
        if health.statement_timeout(conn) in ("0", "0ms"):
            lines.append(
                (
                    "WARN",
                    "no statement_timeout through the pooler (lore cannot send one there) → "
                    "ALTER ROLE <lore's role> SET statement_timeout = '30s'",
                )
            )
    if plan.warning:
        lines.append(("WARN", plan.warning))
    if plan.listen_url is None:
        if not plan.warning:
            lines.append(("OK", plan.listen_why))
        return
    try:
        took = health.listen_probe(plan.listen_url, conn)
    except Exception as exc:  # the listen URL itself: unreachable, wrong password, ...
        first = redact(str(exc)).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        lines.append(("FAIL", f"cannot LISTEN ({plan.listen_why}): {first} → check LORE_LISTEN_URL"))
        return
    if took is None:
        lines.append(
            (
                "FAIL",
                f"LISTEN heard nothing within 2 s ({plan.listen_why}): it goes through a transaction pooler? "
                f"Replies then wait for the poll → {LISTEN_HINT}",
            )
        )
    else:
        lines.append(("OK", f"{plan.listen_why}: a notification arrived in {took * 1000:,.0f} ms"))


def _embedded_access(conn: Any, lines: Lines) -> None:
    """Trust lines, a TCP listener or a socket others can open on the embedded server."""
    from lore.db import embedded, health

    settings, hba = health.access(conn)
    socket_mode = None
    for directory in (settings.get("unix_socket_directories") or "").split(","):
        with contextlib.suppress(OSError):
            socket_mode = stat.S_IMODE(os.stat(directory.strip()).st_mode)
            break
    problems = embedded.audit(settings, hba, socket_mode)
    for problem, fix in problems:
        lines.append(("FAIL", f"embedded database: {problem} → {fix}"))
    if not problems:
        lines.append(("OK", "embedded database reachable only by you (unix socket 0700, peer, no TCP)"))


def _seen_workspaces(conn: Any, config: Config, env: Mapping[str, str], lines: Lines) -> None:
    from lore.core.session import build
    from lore.core.workspace import WorkspaceSignal
    from lore.service import overview

    for seen in overview.workspaces_seen(conn, limit=10):
        workspace = seen.workspace
        try:
            session = build(WorkspaceSignal(Path(workspace), "seen"), config, env, "cli")
            exists = "" if Path(workspace).exists() else " (directory no longer exists)"
            level = "WARN" if exists else "OK"
            lines.append((level, f"seen workspace {workspace} → space {session.space}{exists}"))
        except LoreError as exc:
            lines.append(("WARN", f"seen workspace {workspace}: {exc.message} → {exc.hint}"))
