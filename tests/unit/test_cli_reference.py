"""The command line describes itself: `--version`, every option's default in its `--help`, the
README's command table made from the parser (scripts/readme_commands.py), and shell completion for
bash, zsh and fish made from the same parser, run in the real shells."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lore import __version__
from lore.cli import completion
from lore.cli.main import main, parser
from lore.cli.reference import markdown_table, walk
from lore.core import clients

ROOT = Path(__file__).resolve().parents[2]


def _shell(name: str) -> str:
    found = shutil.which(name)
    assert found, f"{name} is needed for its completion test: apt-get install {name}"
    return found


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"lore {__version__}\n"


def test_the_version_is_read_only_when_asked() -> None:
    """Every command builds the parser (the session-start hook too); reading the installed
    metadata costs ~25 ms, so only `--version` does it."""
    probe = (
        "import sys; from lore.cli.main import parser; parser(); print('importlib.metadata' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.stdout.strip() == "False", done.stdout + done.stderr


def test_every_option_with_a_default_shows_it_in_help() -> None:
    missing = []
    for command in walk(parser()):
        text = " ".join(command.parser.format_help().split())
        for action in command.parser._actions:
            if action.default in (None, False, argparse.SUPPRESS) or isinstance(action, argparse._HelpAction):
                continue
            if not action.option_strings and action.nargs not in (argparse.OPTIONAL, argparse.ZERO_OR_MORE):
                continue
            if f"default: {action.default}" not in text and "(default" not in (action.help or ""):
                missing.append((command.name, action.dest))
    assert not missing, missing
    serve = " ".join(next(c for c in walk(parser()) if c.name == "serve").parser.format_help().split())
    assert "--log-level {debug,info,warning,error} what to log (default: warning)" in serve


def test_every_option_and_positional_has_help() -> None:
    bare = [
        (c.name, a.dest)
        for c in walk(parser())
        for a in c.parser._actions
        if not a.help and not isinstance(a, argparse._SubParsersAction)
    ]
    assert not bare, bare


def test_the_readme_command_table_is_the_parsers() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = markdown_table(parser())
    assert table in readme, "README.md's command table drifted: run `python scripts/readme_commands.py`"
    for needed in (
        "`lore export",
        "`lore import FILE",
        "`lore import-markdown",
        "`lore purge",
        "`lore notes add",
    ):
        assert needed in table
    assert "`lore facts add STATEMENT" in table and "`lore facts revise ID STATEMENT" in table
    check = subprocess.run(
        [sys.executable, "scripts/readme_commands.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout


def test_the_readme_check_fails_on_a_drifted_table(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("readme_commands", ROOT / "scripts" / "readme_commands.py")
    assert spec is not None and spec.loader is not None
    readme_commands = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(readme_commands)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    drifted = text.replace("| `lore purge", "| `lore purgeall", 1)
    assert readme_commands.rewritten(drifted) == text  # the rewrite puts the parser's row back


def _bash_complete(line: str) -> list[str]:
    script = completion.script("bash", parser())
    words = line.split(" ")
    array = " ".join(f"'{w}'" for w in words)
    call = f"COMP_WORDS=({array}); COMP_CWORD={len(words) - 1}; _lore"
    probe = f"{script}\n{call}; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    done = subprocess.run([_shell("bash"), "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


def test_bash_completes_commands_options_and_choices() -> None:
    commands = _bash_complete("lore ")
    assert {"mcp", "serve", "facts", "import-markdown", "completion"} <= set(commands)
    assert _bash_complete("lore fa") == ["facts"]
    assert set(_bash_complete("lore facts ")) == {"list", "history", "add", "revise"}
    assert "--valid-from" in _bash_complete("lore facts add --")
    assert _bash_complete("lore serve --log-level ") == ["debug", "info", "warning", "error"]
    assert set(_bash_complete("lore install ")) == set(clients.CLIENTS)
    assert set(_bash_complete("lore hook session-start --client ")) == set(clients.CLIENTS)
    assert _bash_complete("lore completion ") == ["bash", "zsh", "fish"]


def test_fish_completes_from_the_same_parser(tmp_path: Path) -> None:
    script = tmp_path / "lore.fish"
    script.write_text(completion.script("fish", parser()))

    def complete(line: str) -> list[str]:
        done = subprocess.run(
            [_shell("fish"), "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0 and not done.stderr, done.stderr
        return [w.split("\t")[0] for w in done.stdout.splitlines()]

    assert {"mcp", "serve", "facts", "export"} <= set(complete("lore "))
    assert set(complete("lore facts ")) == {"list", "history", "add", "revise"}
    assert {"--valid-from", "--subject"} <= set(complete("lore facts add --"))
    assert sorted(complete("lore serve --log-level ")) == ["debug", "error", "info", "warning"]
    assert set(complete("lore install ")) == set(clients.CLIENTS)


def test_zsh_script_parses_and_defines_its_functions(tmp_path: Path) -> None:
    script = tmp_path / "_lore"
    script.write_text(completion.script("zsh", parser()))
    zsh = _shell("zsh")
    parsed = subprocess.run([zsh, "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert parsed.returncode == 0, parsed.stderr
    probe = f"compdef() {{ :; }}; source {script}; _lore_children facts; _lore_values serve --log-level"
    done = subprocess.run([zsh, "-f", "-c", probe], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["list", "history", "add", "revise", "debug", "info", "warning", "error"]


def test_completion_command_prints_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# bash completion for lore") and re.search(r"^complete .* lore$", out, re.M)
