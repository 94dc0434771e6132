"""Every `lore` command but the hooks: the parsed arguments to the command's module (each imported
when run). Kept apart from lore.cli.main, which every hook starts in and should cost nothing."""

from __future__ import annotations

import sys

from lore.core.errors import LoreError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> int:
    """Run one parsed command; a LoreError is printed (in a terminal's terms) with its next action."""
    try:
        return _dispatch(args)
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


def _dispatch(args: argparse.Namespace) -> int:
    command = args.command
    if command == "completion":
        from lore.cli import args as arguments
        from lore.cli import completion

        sys.stdout.write(completion.script(args.shell, arguments.parser()))
        return 0
    if command == "hook":
        from lore.cli import hook

        return hook.run(args.event, args.client)
    if command == "mcp":
        from lore.cli import serving

        return serving.stdio(args.workspace)
    if command == "serve":
        from lore.cli import serving

        return serving.http(
            args.host,
            args.port,
            sign_in=args.sign_in,
            oauth=args.oauth,
            public_url=args.public_url,
            stateless=args.stateless,
            log_level=args.log_level,
            json_logs=args.log_format == "json",
        )
    if command == "token":
        from lore.cli import token

        return token.run(args.action, args.target, expires=args.expires, label=args.label, user=args.user)
    if command in ("login", "logout", "mcp-headers"):
        from lore.cli import signin

        if command == "login":
            return signin.run(
                "login", args.url, with_token=args.with_token, browser=args.browser, no_open=args.no_open
            )
        return signin.run(command)
    if command == "config":
        from lore.cli import config_push

        return config_push.push(args.file, args.user)
    if command == "run":
        from lore.cli import serving

        return serving.quickstart(args.port)
    if command == "db":
        from lore.cli import database

        return database.run(args.action)
    if command == "service":
        from lore.cli import login

        return login.run(args.action, enable=not args.no_enable)
    if command in ("init", "which", "doctor"):
        from lore.cli import setup

        return setup.run(command, getattr(args, "dir", None))
    if command in ("install", "uninstall"):
        from lore.cli import install

        return install.run(command, args.client, args.project, args.dry_run, getattr(args, "server", None))
    if command in ("tasks", "messages", "listen"):
        from lore.cli import work

        return work.run(args)
    if command == "reindex":
        from lore.cli import reindex

        return reindex.run(everything=args.all)
    if command == "facts" and args.action in ("add", "revise"):
        from lore.cli import curate

        first, second = (args.statement, None) if args.action == "add" else (args.id, args.statement)
        return curate.fact(
            args.action,
            first,
            second,
            subject=args.subject,
            valid_from=args.valid_from,
            valid_to=args.valid_to,
            workspace=args.workspace,
            allow_secret=args.allow_secret,
            supersedes=getattr(args, "supersedes", None),
        )
    if command == "notes":
        from lore.cli import curate

        return curate.note(
            curate.body_of(args.body, args.file),
            kind=args.kind,
            title=args.title,
            tags=args.tags,
            workspace=args.workspace,
            allow_secret=args.allow_secret,
            when=args.when,
        )
    if command in ("export", "import", "import-markdown", "import-instructions", "purge"):
        from lore.cli import data

        if command == "export":
            return data.export(args.space, args.output)
        if command == "import":
            return data.load(args.file)
        if command == "import-markdown":
            return data.import_markdown(args.path, args.workspace, args.allow_secret)
        if command == "import-instructions":
            return data.import_instructions(args.path, args.workspace, args.allow_secret)
        return data.erase(args.id, args.yes, args.full)
    if command == "facts":
        from lore.cli import memory

        return memory.facts(
            args.action, getattr(args, "id", None), args.workspace, getattr(args, "usage", False)
        )
    if command == "handoff":
        from lore.cli import memory

        return memory.handoff(args.workspace)
    if command == "tidy":
        from lore.cli import tidy

        return tidy.run(args)
    if command == "search":
        from lore.cli import find

        return find.run(args)
    if command == "log":
        from lore.cli import record

        return record.run(args)
    if command == "session-start":
        from lore.cli import memory

        return memory.start(args.workspace, args.client)
    raise AssertionError(command)
