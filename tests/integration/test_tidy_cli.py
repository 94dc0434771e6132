"""Month six (issue 28, Done when): the five commands a user typed gave the same fact three times
and two deploy targets "both true now". Now: the second is refused as a copy (with the id), the
third is stored with the similar id named, the fifth gets a conflict note; the next session start
shows no fact twice; `lore tidy --json` lists the deploy conflict; merging it leaves one current
fact with the other in its history (and undoing the merge brings it back)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest
from support import cli


@pytest.fixture
def proj(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "proj"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "w"\npaths = ["{work}"]\n')
    return work, lore_env


def lore(here: tuple[Path, dict[str, str]], *args: str) -> str:
    work, env = here
    done = cli.run(*args, env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    return done.stdout


def current(conn: psycopg.Connection) -> list[tuple[int, str]]:
    return conn.execute(
        "SELECT lineage, statement FROM facts WHERE superseded_at IS NULL ORDER BY lineage"
    ).fetchall()


def test_the_five_commands_then_tidy_and_merge(
    proj: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    first = lore(proj, "facts", "add", "--subject", "proj", "Tests run with make test; they need Chromium.")
    assert first.startswith("Remembered f_1 in space w.")
    again = lore(proj, "facts", "add", "--subject", "proj", "Tests run with make test; they need Chromium.")
    assert again.startswith("Already remembered as f_1 in space w (the same statement): nothing written.")
    third = lore(
        proj, "facts", "add", "--subject", "proj", "The tests are run with 'make test' and need chromium"
    )
    assert third.startswith("Remembered f_2 in space w.")
    assert "Similar: f_1 [proj] “Tests run with make test; they need Chromium.”" in third
    assert "lore facts revise f_1 STATEMENT instead" in third  # a terminal's command (issue 40, item 7)
    fourth = lore(proj, "facts", "add", "--subject", "proj", "Deploys go to fly.io")
    assert fourth.strip() == "Remembered f_3 in space w."
    fifth = lore(proj, "facts", "add", "--subject", "proj", "Deploys go to Render, not fly.io anymore")
    assert fifth.startswith("Remembered f_4 in space w.")
    # a change statement that says what went away names what it may replace (issue 40, item 3)
    assert "May replace: f_3 [proj] “Deploys go to fly.io”" in fifth
    assert (
        'lore facts add "Deploys go to Render, not fly.io anymore" --subject "proj" --supersedes f_3' in fifth
    )
    assert [lineage for lineage, _ in current(conn)] == [1, 2, 3, 4]  # the copy wrote nothing

    start = lore(proj, "session-start", "--client", "claude-code")
    lines = [line for line in start.splitlines() if line.startswith("- ")]
    assert len(lines) == 3, start  # the tests fact once, both deploy facts
    tests = [line for line in lines if "test" in line.lower()]
    assert len(tests) == 1 and "(+1 similar: f_1)" in tests[0], start
    deploys = [line for line in lines if "Deploys" in line]
    assert len(deploys) == 2 and deploys[0].startswith("- Deploys go to Render, not fly.io anymore [f_4")
    assert deploys[1].startswith("- Deploys go to fly.io [f_3")
    assert deploys[1].endswith("(superseded? see f_4)")
    statements = [re.sub(r" \[f_\d+.*$", "", line) for line in lines]
    assert len(set(statements)) == len(statements)

    report = json.loads(lore(proj, "tidy", "--json"))
    assert report["space"] == "w"
    conflicts = report["conflicts"]
    assert [[i["id"] for i in c["items"]] for c in conflicts] == [["f_4", "f_3"]]
    assert conflicts[0]["subject"] == "proj"
    assert [[i["id"] for i in d["items"]] for d in report["duplicates"]] == [["f_2", "f_1"]]

    merged = lore(proj, "tidy", "merge", "f_4", "f_3")
    assert "Merged f_3 into f_4" in merged
    deploy_now = [s for _, s in current(conn) if "Deploy" in s]
    assert deploy_now == ["Deploys go to Render, not fly.io anymore"]
    reason = conn.execute("SELECT reason FROM forget_log WHERE lineage = 3").fetchone()
    assert reason == ("merged into f_4",)
    history = lore(proj, "facts", "history", "f_4")
    assert "Deploys go to Render, not fly.io anymore" in history
    assert "merged into it" in history and "f_3" in history and "Deploys go to fly.io" in history
    after = json.loads(lore(proj, "tidy", "--json"))
    assert after["conflicts"] == [] and after["actions"][0]["action"] == "merge"

    undone = lore(proj, "tidy", "undo", str(after["actions"][0]["id"]))
    assert "f_3 is current again" in undone
    assert [lineage for lineage, _ in current(conn)] == [1, 2, 3, 4]

    # `lore purge` erases a fact from the audit of tidying too
    lore(proj, "purge", "f_3", "--yes")
    left = conn.execute(
        "SELECT count(*) FROM tidy_actions WHERE 'f_3' = ANY(items) OR target = 'f_3'"
    ).fetchone()
    assert left == (0,)
