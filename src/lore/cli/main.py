"""`lore`: the command line. Parsing only; each command group lives in its own module and is
imported when run, so that `lore hook …` pays for nothing it does not use: a hook call is read
without argparse (the parser, lore.cli.args, is built for every other command)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

TYPE_CHECKING = False  # no `typing` at run time: every hook starts here

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
    from lore.cli import commands

    return commands.run(parser().parse_args(given))


if __name__ == "__main__":
    sys.exit(main())
