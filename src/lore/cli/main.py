"""`lore`: the command line. Parsing only; each command group lives in its own module and is
imported when run, so that `lore hook …` pays for nothing it does not use."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from lore import __version__
from lore.errors import LoreError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lore", description="One memory shared by every AI coding agent.")
    p.add_argument("--version", action="version", version=f"lore {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    mcp = sub.add_parser("mcp", help="stdio MCP server for one agent session")
    mcp.add_argument("--workspace", metavar="DIR", help="the session's project directory")

    serve = sub.add_parser("serve", help="MCP over streamable HTTP at /mcp (127.0.0.1)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)

    sub.add_parser("run", help="prepare everything (database, config) and serve MCP over HTTP")

    db = sub.add_parser("db", help="the embedded PostgreSQL")
    db.add_argument("action", choices=["start", "stop", "status", "url"])

    sub.add_parser("init", help="write a starter config if none exists")
    which = sub.add_parser("which", help="print the space for a directory and why")
    which.add_argument("dir", nargs="?", default=None)
    sub.add_parser("doctor", help="check config, paths, database, schema; each line OK or the fix")

    fcts = sub.add_parser("facts", help="read facts from a terminal")
    fcts.add_argument("action", choices=["list", "history"])
    fcts.add_argument("id", nargs="?")
    fcts.add_argument("--workspace", metavar="DIR")

    for verb in ("install", "uninstall"):
        inst = sub.add_parser(verb, help=f"{verb} lore for an agent (user scope)")
        inst.add_argument("client", help="claude-code")

    hook = sub.add_parser("hook", help="agent hooks (stdin: the client's hook JSON)")
    hook.add_argument("event", choices=["session-start"])
    hook.add_argument("--client", default="claude-code")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args)
    except LoreError as exc:
        if args.verbose:
            raise
        print(f"lore: {exc.message}", file=sys.stderr)
        if exc.hint:
            print(f"  → {exc.hint}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


def _dispatch(args: argparse.Namespace) -> int:
    command = args.command
    if command == "hook":
        from lore.cli import hook

        return hook.run(args.event, args.client)
    if command == "mcp":
        from lore.cli import serving

        return serving.stdio(args.workspace)
    if command == "serve":
        from lore.cli import serving

        return serving.http(args.host, args.port)
    if command == "run":
        from lore.cli import serving

        return serving.quickstart()
    if command == "db":
        from lore.cli import database

        return database.run(args.action)
    if command in ("init", "which", "doctor"):
        from lore.cli import setup

        return setup.run(command, getattr(args, "dir", None))
    if command in ("install", "uninstall"):
        from lore.cli import install

        return install.run(command, args.client)
    if command == "facts":
        from lore.cli import memory

        return memory.facts(args.action, args.id, args.workspace)
    raise AssertionError(command)


if __name__ == "__main__":
    sys.exit(main())
