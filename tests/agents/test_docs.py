"""docs/agents/<client>.md cannot go stale: every `lore …` command in their sh blocks runs here, in
order, in a fresh home and repository; every test file a guide cites exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support import cli

from lore.installers import names

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "agents"


def commands(doc: Path) -> list[list[str]]:
    found = []
    for block in re.findall(r"```sh\n(.*?)```", doc.read_text(), re.DOTALL):
        for line in block.splitlines():
            line = re.split(r"\s+#", line)[0].strip()
            if line.startswith("lore "):
                found.append(shlex.split(line)[1:])
    return found


def test_there_is_one_guide_per_client() -> None:
    assert sorted(p.stem for p in DOCS.glob("*.md")) == sorted(names())


@pytest.mark.parametrize("client", names())
def test_the_guides_commands_run(client: str, tmp_path: Path, lore_env: dict[str, str]) -> None:
    doc = DOCS / f"{client}.md"
    steps = commands(doc)
    assert ["install", client] in steps and ["uninstall", client] in steps, steps
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for args in steps:
        done = cli.run(*args, cwd=repo, env=lore_env)  # the command line's main, in this process
        if args[0] != "doctor":  # doctor exits 1 when anything in the machine fails; its lines are checked
            assert done.returncode == 0, f"{doc.name}: lore {' '.join(args)}\n{done.stdout}\n{done.stderr}"
        elif any(a[0] == "install" for a in steps[: steps.index(args)]):
            assert f"{client} (" in done.stdout, done.stdout


@pytest.mark.parametrize("client", names())
def test_the_guides_cite_tests_that_exist(client: str) -> None:
    text = (DOCS / f"{client}.md").read_text()
    cited = re.findall(r"`(tests/[\w/.-]+)`", text)
    assert cited, f"{client}.md does not say how it is verified"
    for path in cited:
        assert (REPO / path.rstrip("/")).exists(), path
