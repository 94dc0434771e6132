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

    serve = sub.add_parser("serve", help="MCP over streamable HTTP at /mcp, JSON API at /api (127.0.0.1)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--sign-in", action="store_true", help="every request needs a token; spaces per user")
    serve.add_argument("--oauth", action="store_true", help="--sign-in, plus the MCP OAuth flow")
    serve.add_argument("--public-url", metavar="URL", help="how clients reach this server (behind a proxy)")
    serve.add_argument("--stateless", action="store_true", help="no MCP session state: any replica answers")
    serve.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])

    token = sub.add_parser("token", help="HTTP sign-in tokens (lore serve --sign-in)")
    token.add_argument("action", choices=["create", "list", "revoke"])
    token.add_argument("target", nargs="?", metavar="USER|ID", help="create: the user; revoke: the token id")
    token.add_argument("--expires", metavar="WHEN", help="create: 90min, 12h, 30d, 2w, 1y or a date")
    token.add_argument("--label", help="create: what the token is for (e.g. laptop)")
    token.add_argument("--user", help="list: one user's tokens; revoke: every token of this user")

    cfg = sub.add_parser("config", help="push your config to a lore server (sign-in mode)")
    cfg.add_argument("action", choices=["push"])
    cfg.add_argument("file", nargs="?", help="default: your lore config file")
    cfg.add_argument("--user", help="write straight into the database for USER (admin), not over HTTP")

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

    tasks = sub.add_parser("tasks", help="this space's tasks: list, file, update, show")
    tasks.add_argument("action", nargs="?", default="list", choices=["list", "file", "update", "show"])
    tasks.add_argument("args", nargs="*", help="file: TITLE [BODY]; update: ID STATUS; show: ID")
    tasks.add_argument("--to", metavar="SPACE", help="file: into that space's inbox")
    tasks.add_argument("--note", help="update: why")
    tasks.add_argument("--all", action="store_true", help="list: done tasks too")
    tasks.add_argument("--workspace", metavar="DIR")

    msgs = sub.add_parser("messages", help="messages to and from this space: list, read, send")
    msgs.add_argument("action", nargs="?", default="list", choices=["list", "read", "send"])
    msgs.add_argument("args", nargs="*", help="send: TO BODY")
    msgs.add_argument("--reply-to", metavar="ID", help="send: the m_ id answered")
    msgs.add_argument("--wait", type=float, default=0, metavar="SECONDS", help="send: wait for the reply")
    msgs.add_argument("--workspace", metavar="DIR")

    listen = sub.add_parser("listen", help="print new messages and inbox tasks as they arrive")
    listen.add_argument("--workspace", metavar="DIR")
    listen.add_argument("--no-desktop", action="store_true", help="print only; no desktop notification")

    reindex = sub.add_parser("reindex", help="embed every note that lacks a vector of the configured model")
    reindex.add_argument("--all", action="store_true", help="re-embed every note, not only missing ones")

    for verb in ("install", "uninstall"):
        inst = sub.add_parser(verb, help=f"{verb} lore's MCP server and session-start hook for an agent")
        inst.add_argument("client", help="claude-code gemini codex cursor vscode opencode cline copilot")
        inst.add_argument("--project", action="store_true", help="this repository's files, not your user's")
        inst.add_argument("--dry-run", action="store_true", help="show the change; write nothing")

    hook = sub.add_parser("hook", help="agent hooks (stdin: the client's hook JSON)")
    hook.add_argument("event", choices=["session-start", "prompt"])
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

        return serving.http(
            args.host, args.port, sign_in=args.sign_in, oauth=args.oauth, public_url=args.public_url,
            stateless=args.stateless, log_level=args.log_level,
        )  # fmt: skip
    if command == "token":
        from lore.cli import token

        return token.run(args.action, args.target, expires=args.expires, label=args.label, user=args.user)
    if command == "config":
        from lore.cli import config_push

        return config_push.push(args.file, args.user)
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

        return install.run(command, args.client, args.project, args.dry_run)
    if command in ("tasks", "messages", "listen"):
        from lore.cli import work

        return work.run(args)
    if command == "reindex":
        from lore.cli import reindex

        return reindex.run(everything=args.all)
    if command == "facts":
        from lore.cli import memory

        return memory.facts(args.action, args.id, args.workspace)
    raise AssertionError(command)


if __name__ == "__main__":
    sys.exit(main())
