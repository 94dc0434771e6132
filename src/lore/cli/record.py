"""`lore log [show ID]`: what lore told your agents. Each record is one outcome of a hook (a session
start's memory, the inbox before a prompt, and every failure: unavailable, a config error, a tie, the
deadline, a write kept in the spool, a run its agent killed), newest first, in your spaces; `show`
prints the exact text the agent received, with each item's id. `--json` for scripts."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lore.cli.context import gateway
from lore.core import render
from lore.core.errors import InvalidInput
from lore.core.inert import printable
from lore.core.injection import FOLDED, Injection
from lore.core.rows import from_json


def run(args: argparse.Namespace) -> int:
    if args.action == "show":
        if not args.id:
            raise InvalidInput("lore log show takes ID.", "Example: lore log show 12 (`lore log` lists ids).")
        with gateway() as gw:
            found = gw.log_record(args.id)["record"]
        row = _row(found)
        print(
            json.dumps(found, ensure_ascii=False, indent=2) if args.json else _full(row, found.get("handoff"))
        )
        return 0
    with gateway() as gw:
        got = gw.log(client=args.client, workspace=args.workspace, since=args.since, limit=args.limit)
        where = gw.where
    if args.json:
        print(json.dumps(got["records"], ensure_ascii=False, indent=2))
        return 0
    rows = [_row(r) for r in got["records"]]
    if not rows:
        print(f"No injections recorded yet (spaces {', '.join(got['spaces'])}; on {where}).")
        return 0
    for row in rows:
        print(_line(row))
    print("`lore log show ID` prints what the agent received.")
    return 0


def _line(row: Injection) -> str:
    when = row.at.astimezone().strftime("%Y-%m-%d %H:%M")
    space = row.space or "(no space)"
    head = f"#{row.id}  {when}  {row.kind:<13} {row.client:<12} {space:<14}"
    if row.outcome != "shown":
        return f"{head} {row.outcome}: {row.detail or ''}  {row.workspace}".rstrip()
    cut = f", {len(row.budget_cut)} cut" if row.budget_cut else ""
    cut += f", {len(row.folded)} folded" if row.folded else ""
    shown = render.counted(len(row.shown), "fact" if row.kind == "session-start" else "item")
    return f"{head} {shown} shown{cut}, {row.chars:,}/{row.budget:,} chars  {row.workspace}"


def _folds(pairs: list[tuple[str, str]]) -> str:
    """`f_4 into f_8, f_9 into f_8`."""
    return ", ".join(f"{a} into {b}" for a, b in pairs)


def _row(found: dict[str, Any]) -> Injection:
    """A record as /api and the gateway send it (`cut` the budget's, `folded` apart) as a row."""
    folds = [f"{a}{FOLDED}{b}" for a, b in found.get("folded") or []]
    return from_json(Injection, found | {"cut": [*found.get("cut", []), *folds]})


def _full(row: Injection, handoff: Any) -> str:
    """One record in full; its handoff by the handoff's public id (its note's, as the text says)."""
    led = (handoff or "a handoff since purged") if row.handoff else None
    head = [
        f"#{row.id} {row.kind} {row.at.isoformat(timespec='seconds')} via {row.via}: {row.client}"
        + (f" (session {row.session_id})" if row.session_id else ""),
        f"  outcome {row.outcome}" + (f": {row.detail}" if row.detail else ""),
        f"  workspace {row.workspace or '(unknown)'}, space {row.space or '(none)'}"
        + (f" (reads {', '.join(row.readable)})" if row.readable else ""),
        f"  shown: {', '.join(row.shown) or 'no facts'}; "
        f"cut by the budget: {', '.join(row.budget_cut) or 'none'}"
        + (f"; folded as similar ({_folds(row.folded)})" if row.folded else ""),
        f"  {row.chars:,} of {row.budget:,} characters, {row.duration_ms} ms"
        + (f"; led with handoff {led}" if led else "")
        + (f"; instruction sections {', '.join(row.instructions)}" if row.instructions else ""),
        "",
    ]
    return "\n".join(head) + printable(row.text)
