"""lore's command line as an argparse parser (lore.cli.parser's class), made of the command table
(lore.cli.commands). `lore` parses with it, `lore completion` completes from it (lore.cli.reference),
and the README's command table is made from it (scripts/readme_commands.py). `lore hook …` never
builds it (lore.cli.main)."""

from __future__ import annotations

import argparse

from lore.cli.commands import COMMANDS
from lore.cli.parser import Parser, Version


def parser() -> argparse.ArgumentParser:
    """The whole command line: what `lore` parses, `lore completion` completes and the README's
    command table lists (scripts/readme_commands.py). Each command is built by its entry in
    lore.cli.commands, in the table's order."""
    p = Parser(prog="lore", description="One memory shared by every AI coding agent.")
    p.add_argument("--version", action=Version)
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.build(sub, command.name)
    p.set_defaults(root_parser=p)  # for the commands that read the whole line (`lore completion`)
    return p
