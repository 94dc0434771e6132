"""lore's argparse parser class: help that ends with the default, one line for a typo, and
`--version` read only when asked. lore.cli.args builds the command line with it; lore.cli.flags
declares each command's options on it."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import Any, NoReturn


class _Help(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the default is None/False or the help
    already says it (tests/unit/test_cli_reference.py checks each one)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        if action.option_strings or action.nargs in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
            return f"{text} (default: %(default)s)".lstrip()
        return text


class Version(argparse.Action):
    """`--version`, read from the installed metadata only when asked: reading it costs ~25 ms, and
    every command (the session-start hook too) builds this parser."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from lore import __version__

        print(f"lore {__version__}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """lore's parser: its subcommands are Parsers too (add_subparsers uses the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Help)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """A typo'd command or choice: one line saying what was meant, not the whole list."""
        found = _INVALID.search(message)
        if found:
            given, choices = found.group(1), re.findall(r"'([^']*)'", found.group(2))
            near = difflib.get_close_matches(given, choices, n=1, cutoff=0.6)
            hint = f"did you mean `{near[0]}`?" if near else f"choose from: {', '.join(choices)}"
            self.exit(2, f"{self.prog}: {given!r} is not a {self.prog} choice here; {hint}\n")
        super().error(message)


_INVALID = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")
