"""`lore tidy`: what is duplicated, contradicted or stale in this workspace's space, and the acts that
settle it (lore.service.tidy), from a terminal."""

from __future__ import annotations

import argparse
import json

from lore.cli.context import runtime
from lore.core import tidy as shown
from lore.core.errors import InvalidInput
from lore.service import tidy


def run(args: argparse.Namespace) -> int:
    with runtime() as rt:
        session = rt.command_session(args.workspace)
        if args.action == "list":
            if args.args:
                raise InvalidInput("lore tidy lists without arguments.", "Example: lore tidy merge f_5 f_4")
            found = tidy.report(rt, session.space, here=str(session.root), check_paths=True)
            print(
                json.dumps(found.as_json(), indent=2, ensure_ascii=False) if args.json else shown.text(found)
            )
            return 0
        if args.action == "merge":
            if len(args.args) < 2:
                raise InvalidInput(
                    "lore tidy merge takes INTO and OTHER ids.", "Example: lore tidy merge f_5 f_4"
                )
            done = tidy.merge(rt, session, args.args[0], args.args[1:], statement=args.statement)
        elif args.action == "keep":
            done = tidy.keep(rt, session, args.args)
        elif args.action == "forget":
            done = tidy.forget(rt, session, args.args, args.reason)
        else:
            if len(args.args) != 1:
                raise InvalidInput(
                    f"lore tidy {args.action} takes one action id.", f"Example: lore tidy {args.action} 12"
                )
            done = (tidy.undo if args.action == "undo" else tidy.redo)(rt, session, args.args[0])
        print(done.text)
    return 0
