"""`lore facts list|history`: read memory from a terminal, through the same core as the tools."""

from __future__ import annotations

import os
from pathlib import Path

from lore import facts as fact_store
from lore import render, validate
from lore.config import load_config
from lore.db import connect, migrate
from lore.session import build
from lore.workspace import WorkspaceSignal, choose_workspace


def facts(action: str, item: str | None, workspace: str | None) -> int:
    config = load_config()
    signal = (
        WorkspaceSignal(Path(workspace), "--workspace")
        if workspace
        else choose_workspace(None, os.environ, [], os.getcwd())
    )
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
        rows = fact_store.query(conn, session.readable, prefer_subject=session.workspace_name)
        total = fact_store.count(conn, session.readable)
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
