"""`lore log [show ID]`: what lore told your agents. Each record is one injection (a session start),
newest first, in the spaces this directory's session may read; `show` prints the exact text the agent
received, with each item's id. `--json` for scripts."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from lore.cli.context import runtime
from lore.core import render
from lore.core.errors import InvalidInput
from lore.core.injection import Injection
from lore.service import log


def run(args: argparse.Namespace) -> int:
    with runtime() as rt:
        session = rt.command_session(None)
        spaces = rt.config().ids  # a person reads every space of their config
        if args.action == "show":
            if not args.id:
                raise InvalidInput(
                    "lore log show takes ID.", "Example: lore log show 12 (`lore log` lists ids)."
                )
            found = log.get(rt, spaces, args.id)
            print(json.dumps(_json(found), ensure_ascii=False, indent=2) if args.json else _full(found))
            return 0
        where = str(Path(os.path.abspath(args.workspace))) if args.workspace else None
        rows = log.recent(rt, spaces, client=args.client, workspace=where, since=args.since, limit=args.limit)
    if args.json:
        print(json.dumps([_json(r) for r in rows], ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print(f"No injections recorded yet (spaces {', '.join(spaces)}; from {session.signal.path}).")
        return 0
    for row in rows:
        print(_line(row))
    print("`lore log show ID` prints what the agent received.")
    return 0


def _line(row: Injection) -> str:
    when = row.at.astimezone().strftime("%Y-%m-%d %H:%M")
    cut = f", {len(row.budget_cut)} cut" if row.budget_cut else ""
    cut += f", {len(row.folded)} folded" if row.folded else ""
    return (
        f"#{row.id}  {when}  {row.client:<12} {row.space:<14} {render.counted(len(row.shown), 'fact')} shown"
        f"{cut}, {row.chars:,}/{row.budget:,} chars  {row.workspace}"
    )


def _folds(pairs: list[tuple[str, str]]) -> str:
    """`f_4 into f_8, f_9 into f_8`."""
    return ", ".join(f"{a} into {b}" for a, b in pairs)


def _full(row: Injection) -> str:
    head = [
        f"#{row.id} {row.kind} {row.at.isoformat(timespec='seconds')} via {row.via}: {row.client}"
        + (f" (session {row.session_id})" if row.session_id else ""),
        f"  workspace {row.workspace}, space {row.space} (reads {', '.join(row.readable)})",
        f"  shown: {', '.join(row.shown) or 'no facts'}; "
        f"cut by the budget: {', '.join(row.budget_cut) or 'none'}"
        + (f"; folded as similar ({_folds(row.folded)})" if row.folded else ""),
        f"  {row.chars:,} of {row.budget:,} characters, {row.duration_ms} ms"
        + (f"; led with handoff {row.handoff}" if row.handoff else "")
        + (f"; instruction sections {', '.join(row.instructions)}" if row.instructions else ""),
        "",
    ]
    return "\n".join(head) + render.printable(row.text)


def _json(row: Injection) -> dict[str, Any]:
    out = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in asdict(row).items()}
    return out | {"cut": row.budget_cut, "folded": [list(x) for x in row.folded]}
