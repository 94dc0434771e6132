"""lore's commands, each registered once: its name, the builder of its options (lore.cli.flags)
and its handler (lore.cli.dispatch). The parser (lore.cli.args) adds them in this order, which is
the order `lore --help`, the completion scripts and the README's table list them in."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from lore.cli import dispatch, flags
from lore.core.errors import LoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


@dataclass(frozen=True)
class Command:
    name: str
    build: Callable[[flags.Subcommands, str], None]  # adds the command's parser under `name`
    run: Callable[[argparse.Namespace], int]  # runs it; the exit status


COMMANDS: tuple[Command, ...] = (
    Command("mcp", flags.mcp, dispatch.mcp),
    Command("serve", flags.serve, dispatch.serve),
    Command("token", flags.token, dispatch.token),
    Command("login", flags.login, dispatch.login),
    Command("logout", flags.logout, dispatch.logout),
    Command("mcp-headers", flags.mcp_headers, dispatch.mcp_headers),
    Command("config", flags.config, dispatch.config),
    Command("run", flags.run, dispatch.quickstart),
    Command("db", flags.db, dispatch.database),
    Command("service", flags.service, dispatch.service),
    Command("init", flags.init, dispatch.setup),
    Command("which", flags.which, dispatch.setup),
    Command("doctor", flags.doctor, dispatch.setup),
    Command("facts", flags.facts, dispatch.facts),
    Command("handoff", flags.handoff, dispatch.handoff),
    Command("search", flags.search, dispatch.search),
    Command("log", flags.log, dispatch.log),
    Command("session-start", flags.session_start, dispatch.session_start),
    Command("tidy", flags.tidy, dispatch.tidy),
    Command("notes", flags.notes, dispatch.notes),
    Command("tasks", flags.tasks, dispatch.work),
    Command("messages", flags.messages, dispatch.work),
    Command("listen", flags.listen, dispatch.work),
    Command("export", flags.export, dispatch.export),
    Command("import", flags.load, dispatch.load),
    Command("import-markdown", flags.import_markdown, dispatch.import_markdown),
    Command("import-instructions", flags.import_instructions, dispatch.import_instructions),
    Command("purge", flags.purge, dispatch.purge),
    Command("reindex", flags.reindex, dispatch.reindex),
    Command("install", flags.installer, dispatch.install),
    Command("uninstall", flags.installer, dispatch.install),
    Command("hook", flags.hook, dispatch.hook),
    Command("completion", flags.completion, dispatch.completion),
)
_BY_NAME = {command.name: command for command in COMMANDS}


def handler(name: str) -> Callable[[argparse.Namespace], int]:
    """The handler of the command `name` (a name the parser accepted)."""
    return _BY_NAME[name].run


def run(args: argparse.Namespace) -> int:
    """Run one parsed command; a LoreError is printed (in a terminal's terms) with its next action."""
    try:
        return handler(args.command)(args)
    except LoreError as exc:
        if args.verbose:
            raise
        from lore.core.advice import for_cli  # the hint in a terminal's terms (issue 40, item 7)

        print(f"lore: {for_cli(exc.message)}", file=sys.stderr)
        if exc.hint:
            print(f"  → {for_cli(exc.hint)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
