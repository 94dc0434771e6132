"""`lore tidy`: what is duplicated, contradicted or stale in this workspace's space, and the acts that
settle it (lore.service.tidy), from a terminal, here or on the server this machine uses."""

from __future__ import annotations

import argparse
import json
from typing import Any

from lore.cli.context import gateway
from lore.core.errors import InvalidInput


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        if args.args:
            raise InvalidInput("lore tidy lists without arguments.", "Example: lore tidy merge f_5 f_4")
        with gateway() as gw:
            found = gw.tidy(args.workspace)
        print(json.dumps(found["report"], indent=2, ensure_ascii=False) if args.json else found["text"])
        return 0
    payload = _payload(args)
    with gateway() as gw:
        done = gw.tidy_act(args.workspace, args.action, payload)
    print(done["text"])
    return 0


def _payload(args: argparse.Namespace) -> dict[str, Any]:
    given: list[str] = args.args
    if args.action == "merge":
        if len(given) < 2:
            raise InvalidInput(
                "lore tidy merge takes INTO and OTHER ids.", "Example: lore tidy merge f_5 f_4"
            )
        return {"into": given[0], "others": given[1:], "statement": args.statement}
    if args.action == "keep":
        return {"ids": given}
    if args.action == "forget":
        return {"ids": given, "reason": args.reason}
    if len(given) != 1:
        raise InvalidInput(
            f"lore tidy {args.action} takes one action id.", f"Example: lore tidy {args.action} 12"
        )
    return {"action": given[0]}
