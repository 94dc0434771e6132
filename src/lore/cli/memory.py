"""`lore facts list|history` and `lore handoff`: read memory from a terminal, through the same core
as the tools."""

from __future__ import annotations

import os
from pathlib import Path

from lore.core import render, validate
from lore.core.config import load_config
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal, choose_workspace
from lore.db import connect, migrate
from lore.store import facts as fact_store
from lore.store import handoffs


def _signal(workspace: str | None) -> WorkspaceSignal:
    if workspace:
        return WorkspaceSignal(Path(os.path.abspath(workspace)), "--workspace")
    return choose_workspace(None, os.environ, [], os.getcwd())


def handoff(workspace: str | None) -> int:
    """The last session's handoff here, in full (whatever its age; says when session starts no
    longer show it)."""
    config = load_config()
    session = build(_signal(workspace), config, os.environ, "cli")
    target = connect.target(config.database_url)
    with connect.connect(target.url) as conn:
        migrate.upgrade(conn)
        found = handoffs.last(conn, session.space, str(session.root), None)
        if found is None:
            print(
                f"No handoff for {session.root} (space {session.space}) yet. An agent's session-end hook "
                "writes one when a turn or a session ends: `lore install CLIENT` wires it."
            )
            return 0
        tasks = handoffs.task_titles(conn, found.space, found.tasks)
        hours = config.handoff_max_age_hours
        print(render.handoff_text(found, handoffs.now(conn), tasks, max_age_hours=hours))
    return 0


def facts(action: str, item: str | None, workspace: str | None) -> int:
    config = load_config()
    signal = _signal(workspace)
    session = build(signal, config, os.environ, "cli")
    target = connect.target(config.database_url)
    with connect.connect(target.url) as conn:
        migrate.upgrade(conn)
        if action == "history":
            _, lineage = validate.item_id(item or "", expect="f")
            versions = fact_store.history(conn, session.readable, lineage)
            for v in versions:
                end = v.superseded_at.isoformat() if v.superseded_at else "current"
                print(f"{v.recorded_at.isoformat()} → {end}  {render.fact_line(v)} ({v.source})")
            if not versions:
                print(f"No fact {item} in this workspace's spaces.")
            return 0
        rows, total = fact_store.page(conn, session.readable, prefer_subject=session.workspace_name)
        out = render.recall(
            rows,
            space=session.space,
            workspace_name=session.workspace_name,
            max_chars=1_000_000,
            max_facts=10_000,
            total=total,
        )
        print(out.text)
    return 0
