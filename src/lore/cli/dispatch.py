"""Every `lore` command but the hooks: the parsed arguments to the command's module (each imported
when run). Kept apart from lore.cli.main, which every hook starts in and should cost nothing.

One handler a command (or a few commands that share one), named in lore.cli.commands' table next to
the builder of its options (lore.cli.flags)."""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse


def completion(args: argparse.Namespace) -> int:
    from lore.cli import completion

    sys.stdout.write(completion.script(args.shell, args.root_parser))  # lore.cli.args sets it
    return 0


def hook(args: argparse.Namespace) -> int:
    from lore.cli import hook

    return hook.run(args.event, args.client)


def mcp(args: argparse.Namespace) -> int:
    from lore.cli import serving

    return serving.stdio(args.workspace)


def serve(args: argparse.Namespace) -> int:
    from lore.cli import serving

    json_logs = args.log_format == "json"
    options = {k: getattr(args, k) for k in ("sign_in", "oauth", "public_url", "stateless", "log_level")}
    return serving.http(args.host, args.port, **options, json_logs=json_logs)


def token(args: argparse.Namespace) -> int:
    from lore.cli import token

    return token.run(args.action, args.target, expires=args.expires, label=args.label, user=args.user)


def login(args: argparse.Namespace) -> int:
    from lore.cli import signin

    return signin.run(args.url, with_token=args.with_token, browser=args.browser, no_open=args.no_open)


def logout(args: argparse.Namespace) -> int:
    from lore.cli import signin

    return signin.logout()


def mcp_headers(args: argparse.Namespace) -> int:
    from lore.cli import signin

    return signin.headers()


def config(args: argparse.Namespace) -> int:
    from lore.cli import config_push

    return config_push.push(args.file, args.user)


def quickstart(args: argparse.Namespace) -> int:
    from lore.cli import serving

    return serving.quickstart(args.port)


def database(args: argparse.Namespace) -> int:
    from lore.cli import database

    return database.run(args.action)


def service(args: argparse.Namespace) -> int:
    from lore.cli import login

    return login.run(args.action, enable=not args.no_enable)


def setup(args: argparse.Namespace) -> int:
    """`init`, `which` and `doctor`."""
    from lore.cli import setup

    return setup.run(args.command, getattr(args, "dir", None))


def install(args: argparse.Namespace) -> int:
    """`install` and `uninstall`."""
    from lore.cli import install

    return install.run(args.command, args.client, args.project, args.dry_run, getattr(args, "server", None))


def work(args: argparse.Namespace) -> int:
    """`tasks`, `messages` and `listen`."""
    from lore.cli import work

    return work.run(args)


def reindex(args: argparse.Namespace) -> int:
    from lore.cli import reindex

    return reindex.run(everything=args.all)


def facts(args: argparse.Namespace) -> int:
    """`facts list|history` read (lore.cli.memory); `facts add|revise` write (lore.cli.curate)."""
    if args.action not in ("add", "revise"):
        from lore.cli import memory

        return memory.facts(
            args.action, getattr(args, "id", None), args.workspace, getattr(args, "usage", False)
        )
    from lore.cli import curate

    first, second = (args.statement, None) if args.action == "add" else (args.id, args.statement)
    dates = {"valid_from": args.valid_from, "valid_to": args.valid_to}
    return curate.fact(
        args.action,
        first,
        second,
        subject=args.subject,
        **dates,
        workspace=args.workspace,
        allow_secret=args.allow_secret,
        supersedes=getattr(args, "supersedes", None),
    )


def notes(args: argparse.Namespace) -> int:
    from lore.cli import curate

    body = curate.body_of(args.body, args.file)
    fields = {k: getattr(args, k) for k in ("kind", "title", "tags", "workspace", "allow_secret", "when")}
    return curate.note(body, **fields)


def export(args: argparse.Namespace) -> int:
    from lore.cli import data

    return data.export(args.space, args.output)


def load(args: argparse.Namespace) -> int:
    from lore.cli import data

    return data.load(args.file)


def import_markdown(args: argparse.Namespace) -> int:
    from lore.cli import data

    return data.import_markdown(args.path, args.workspace, args.allow_secret)


def import_instructions(args: argparse.Namespace) -> int:
    from lore.cli import data

    return data.import_instructions(args.path, args.workspace, args.allow_secret)


def purge(args: argparse.Namespace) -> int:
    from lore.cli import data

    return data.erase(args.id, args.yes, args.full)


def handoff(args: argparse.Namespace) -> int:
    from lore.cli import memory

    return memory.handoff(args.workspace)


def tidy(args: argparse.Namespace) -> int:
    from lore.cli import tidy

    return tidy.run(args)


def search(args: argparse.Namespace) -> int:
    from lore.cli import find

    return find.run(args)


def log(args: argparse.Namespace) -> int:
    from lore.cli import record

    return record.run(args)


def session_start(args: argparse.Namespace) -> int:
    from lore.cli import memory

    return memory.start(args.workspace, args.client)
