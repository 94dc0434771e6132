"""The command line described from its own parser: each command's path, usage, help, options and
the words it takes. `lore completion` makes the shell scripts from it, and the README's command
table is made from it (scripts/readme_commands.py; tests/unit/test_cli_reference.py fails when the
README drifts), so neither can disagree with what `lore` parses."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from lore.core import clients

# Words a positional or an option takes that its parser does not list as `choices` (an unknown
# client gets lore's own error, which names the known ones, rather than argparse's).
CLIENTS = tuple(clients.CLIENTS)
EXTRA_WORDS = {"client": CLIENTS, "--client": CLIENTS}


@dataclass(frozen=True)
class Option:
    flags: tuple[str, ...]
    takes_value: bool
    words: tuple[str, ...]  # the values it accepts (choices), empty when any
    metavar: str
    help: str


@dataclass(frozen=True)
class Command:
    path: tuple[str, ...]  # ("facts", "list"); () is `lore` itself
    parser: argparse.ArgumentParser
    help: str
    children: tuple[tuple[str, str], ...]  # (name, help) of its subcommands
    options: tuple[Option, ...]
    words: tuple[str, ...]  # what its positionals accept (their choices)

    @property
    def name(self) -> str:
        return " ".join(self.path)

    def usage(self) -> str:
        """`lore token create|list|revoke [USER|ID] [--expires WHEN] …`: positionals first (choices
        joined by `|`), then every option but --help, each as argparse takes it."""
        parts = ["lore", *self.path]
        for action in self.parser._actions:
            if action.option_strings or isinstance(action, argparse._SubParsersAction):
                continue
            word = "|".join(str(c) for c in action.choices) if action.choices else _metavar(action)
            if action.nargs == argparse.OPTIONAL:
                word = f"[{word}]"
            elif action.nargs == argparse.ZERO_OR_MORE:
                word = f"[{word} ...]"
            parts.append(word)
        for action in self.parser._actions:
            if not action.option_strings or isinstance(action, argparse._HelpAction):
                continue
            flag = max(action.option_strings, key=len)
            if action.nargs == 0:
                parts.append(f"[{flag}]")
            else:
                value = "|".join(str(c) for c in action.choices) if action.choices else _metavar(action)
                parts.append(f"[{flag} {value}]")
        return " ".join(parts)


def _metavar(action: argparse.Action) -> str:
    if isinstance(action.metavar, str):
        return action.metavar
    return action.dest.upper().replace("_", "-")


def _subparsers(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _words(action: argparse.Action) -> tuple[str, ...]:
    listed = tuple(str(c) for c in action.choices) if action.choices else ()
    key = action.option_strings[-1] if action.option_strings else action.dest
    return listed or EXTRA_WORDS.get(key, ())


def walk(parser: argparse.ArgumentParser) -> list[Command]:
    """Every command, depth first: `lore`, then each subcommand (and theirs)."""
    found: list[Command] = []

    def visit(path: tuple[str, ...], p: argparse.ArgumentParser, text: str) -> None:
        sub = _subparsers(p)
        helps = {a.dest: a.help or "" for a in sub._choices_actions} if sub else {}
        children = tuple((name, helps.get(name, "")) for name in (sub.choices if sub else {}))
        options = tuple(
            Option(
                tuple(a.option_strings),
                a.nargs != 0,
                _words(a),
                str(a.metavar or a.dest.upper()),
                a.help or "",
            )
            for a in p._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)
        )
        positional = [a for a in p._actions if not a.option_strings and a is not sub]
        words = tuple(w for a in positional for w in _words(a))
        found.append(Command(path, p, text, children, options, words))
        if sub is not None:
            for name, child in sub.choices.items():
                visit((*path, name), child, helps.get(name, ""))

    visit((), parser, parser.description or "")
    return found


def markdown_table(parser: argparse.ArgumentParser) -> str:
    """The README's command table: one row per command that runs (a group's row per subcommand)."""
    rows = ["| command | does |", "|---|---|"]
    for command in walk(parser):
        if not command.path or command.children:
            continue
        usage = command.usage().replace("|", "\\|")
        rows.append(f"| `{usage}` | {command.help.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
