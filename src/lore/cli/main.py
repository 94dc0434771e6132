"""`lore`: the command line. Parsing only; each command group lives in its own module and is
imported when run, so that `lore hook …` pays for nothing it does not use: a hook call is read
without argparse (the parser, lore.cli.args, is built for every other command)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lore.core.errors import LoreError

if TYPE_CHECKING:
    import argparse

_HOOK_EVENTS = ("session-start", "prompt", "session-end")


def parser() -> argparse.ArgumentParser:
    """The whole command line (lore.cli.args)."""
    from lore.cli import args

    return args.parser()


def _hook_call(argv: Sequence[str]) -> tuple[str, str] | None:
    """(event, client) of `hook EVENT [--client C]` exactly as the installers write it; anything
    else (another spelling, an extra option, a typo) goes through argparse and its messages."""
    if len(argv) < 2 or argv[0] != "hook" or argv[1] not in _HOOK_EVENTS:
        return None
    rest = list(argv[2:])
    if not rest:
        return argv[1], "claude-code"
    if len(rest) == 2 and rest[0] == "--client" and rest[1] and not rest[1].startswith("-"):
        return argv[1], rest[1]
    return None


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    hook_call = _hook_call(given)
    if hook_call is not None:
        from lore.cli import hook

        return hook.run(*hook_call)
    args = parser().parse_args(given)
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
    if command == "completion":
        from lore.cli import completion

        sys.stdout.write(completion.script(args.shell, parser()))
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


if __name__ == "__main__":
    sys.exit(main())
