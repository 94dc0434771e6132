"""The README's quick start works in the order written, on a fresh clone, and ends with the wheel it
built installed alone in a fresh venv (support.quickstart runs it once per test run and says how
each command is run: `make test` is not, it would recurse; pipx is not here, so the README's "pip
install the same file" is).

Cost here (2 cores, shared): about 30 s of wall time, most of it `make run` creating the clone's
.venv; see the module for what is reused (the wheelhouse; no index is asked).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support import quickstart as quick


def _summary(outcome: quick.Outcome) -> str:
    lines = [f"tested: {outcome.state}"]
    for step in outcome.steps:
        lines.append(
            f"  {step.command}  ->  {step.done} (exit {step.returncode}, "
            f"{step.seconds:.1f} s, {step.cpu_seconds:.1f} s CPU)"
        )
    lines.append(
        f"total {outcome.seconds:.1f} s, {outcome.cpu_seconds:.1f} s CPU "
        f"(+ {outcome.database_cpu_seconds:.1f} s CPU in the embedded PostgreSQL)"
    )
    return "\n".join(lines)


def test_the_readme_quick_start_on_a_fresh_clone_ends_with_the_wheel_installed(
    quickstart: quick.Outcome,
) -> None:
    summary = _summary(quickstart)
    print(summary)
    assert quickstart.failure is None, f"{quickstart.failure}\n{summary}"
    clone = Path(quickstart.clone)
    written = quick.commands((clone / "README.md").read_text(encoding="utf-8"))
    done = [step.command for step in quickstart.steps if not step.command.startswith(("git clone", "lore "))]
    assert done == [c.text for c in written], "every command of the quick start, in the order written"
    assert {"serve", "install"} <= {c.kind for c in written}  # `make run` ... the wheel installed
    # `make run`: the starter config, the paste line, and a lore that answers as it should.
    assert quickstart.starter_config
    assert quickstart.paste_line and "'Authorization: Bearer ${LORE_TOKEN}'" in quickstart.paste_line
    assert "lore_" not in quickstart.paste_line  # never the secret itself on a command line
    assert quickstart.answers == {
        "/healthz": 200,
        "/readyz": 200,
        "/api/me": 200,
        "/api/me without the secret": 401,
        "/mcp initialize": 200,
        "/mcp initialize without the secret": 401,
    }
    # The wheel `make wheel` built, installed alone in a fresh venv outside the clone, runs there.
    assert Path(quickstart.wheel or "").parent == clone / "dist"
    lore = Path(quickstart.lore or "")
    assert not lore.is_relative_to(clone) and (lore.parents[1] / "pyvenv.cfg").is_file()
    outputs = {step.command: step.output for step in quickstart.steps}
    assert outputs["lore --version"].startswith("lore ")
    package = next(lore.parents[1].glob("lib/python*/site-packages/lore"))
    doctor = outputs["lore doctor"]
    embedder = [line for line in doctor.splitlines() if " embedder " in line]
    assert embedder and embedder[0].startswith("OK   embedder local"), doctor
    assert str(package / "models") in embedder[0], embedder  # the wheel's own model files
    assert "OK   schema current" in doctor, doctor  # the database `make run` started and migrated


README = """
# x

## Quick start

```sh
make run     # starts it
make test    # tests it
```

```sh
make wheel && pipx install dist/x-*.whl   # or pip install the same file
```
{extra}
### Later

```sh
rm -rf /
```

## Config
"""


def test_the_quick_start_commands_are_read_in_order_from_its_fenced_blocks() -> None:
    found = quick.commands(README.format(extra=""))
    assert [(c.text, c.kind) for c in found] == [
        ("make run", "serve"),
        ("make test", "recursive"),
        ("make wheel", "make"),
        ("pipx install dist/x-*.whl", "install"),
    ]
    assert found[3].comment == "or pip install the same file"


def test_a_quick_start_command_the_test_cannot_run_fails_it() -> None:
    with pytest.raises(quick.Failed, match=re.escape("cannot run: 'curl -sSf https://example.invalid | sh'")):
        quick.commands(README.format(extra="\n```sh\ncurl -sSf https://example.invalid | sh\n```\n"))


def test_a_dirty_working_tree_is_tested_as_a_commit_of_it_and_left_as_it_was(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
            cwd=repo, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip

    git("init", "--quiet")
    (repo / ".gitignore").write_text("ignored.txt\n")
    (repo / "README.md").write_text("old\n")
    git("add", ".")
    git("commit", "--quiet", "-m", "one")
    head = git("rev-parse", "HEAD").strip()
    assert quick.snapshot(repo) == (head, f"the committed state: {head[:12]} (the working tree is clean)")

    (repo / "README.md").write_text("new\n")
    (repo / "added.txt").write_text("untracked\n")
    (repo / "ignored.txt").write_text("ignored\n")
    status = git("status", "--porcelain", "--untracked-files=all")
    commit, state = quick.snapshot(repo)
    assert commit != head and state.startswith(f"the working tree as a commit: {head[:12]} and 2 ")
    assert git("show", f"{commit}:README.md") == "new\n"
    assert git("show", f"{commit}:added.txt") == "untracked\n"
    assert "ignored.txt" not in git("ls-tree", "--name-only", commit)
    assert git("rev-parse", f"{commit}^").strip() == head
    # the checkout is as it was: same HEAD, index and files; no ref names the commit
    assert git("rev-parse", "HEAD").strip() == head
    assert git("status", "--porcelain", "--untracked-files=all") == status
    assert commit not in git("for-each-ref", "--format=%(objectname)")
