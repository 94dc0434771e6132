"""First day, round 2 (item 7): a typo'd subcommand got argparse's whole list; now one line with the
nearest command, and the same for an agent's name."""

from __future__ import annotations

import pytest

from lore.cli.args import parser
from lore.core.errors import InvalidInput
from lore.installers import get


@pytest.mark.parametrize(
    ("argv", "meant"), [(["instal"], "install"), (["db", "strt"], "start"), (["doctr"], "doctor")]
)
def test_a_typo_names_what_was_meant(argv: list[str], meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        parser().parse_args(argv)
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert f"did you mean `{meant}`?" in err and "choose from" not in err and err.count("\n") == 1


def test_no_near_command_lists_them() -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["xyzzy"])


def test_an_agent_name_typo_names_the_agent() -> None:
    with pytest.raises(InvalidInput) as raised:
        get("claud")
    assert raised.value.hint.startswith("Did you mean `claude-code`?")
