"""Month six, round 2 (issue 40): ten facts written by hand about one project (four restatements, two
changes, four distinct), as the issue's new user wrote them at a terminal. Words named 2 of the 4
restatements, and `The demo app now deploys to AWS ECS in eu-west-1 instead of Fly.io` was related to
neither Fly.io fact: the next session was told both "deploys to Fly.io" and "now deploys to AWS ECS".
Now (items 1-3, 7): each restatement is named (by meaning and words) with the `lore` command that
settles it; the change names both Fly.io facts as what it may replace; until that is settled the
session start marks them "superseded? see f_N" instead of showing them as true; keeping both or
confirming the replacement settles it. Real CLI, real embedded PostgreSQL, the local MiniLM model."""

from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest
from support import cli
from support.mcpclient import lore_session, ok, text

pytestmark = pytest.mark.anyio


@pytest.fixture(autouse=True, scope="module")
def _model_loaded() -> None:
    """The local model loaded once in this process (lore shares it between runtimes): a write waits
    at most LORE_WRITE_EMBED_TIMEOUT for its vector, and a first load on a busy machine may take
    longer, which would leave the first facts to words alone and these tests to chance."""
    import os

    from lore.embeddings.local import MiniLM

    MiniLM(dict(os.environ)).embed(["warm"])


@pytest.fixture
def proj(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "demo"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "demo"\npaths = ["{work}"]\n')
    return work, lore_env


def lore(here: tuple[Path, dict[str, str]], *args: str) -> str:
    work, env = here
    done = cli.run(*args, env=env, cwd=work)
    assert done.returncode == 0, done.stderr
    return done.stdout


# (statement, the earlier statement it restates, or None)
TEN = [
    ("Use pytest -x to run the test suite", None),
    ("We use Alembic for database migrations", None),
    ("In development the server runs on port 8080", None),
    ("Deployment: make deploy-fly pushes the app to Fly.io, region ams", None),
    ("Secrets live in 1Password, vault Demo", None),
    ("Tests run with pytest -x", "Use pytest -x to run the test suite"),
    ("Database migrations are written with Alembic", "We use Alembic for database migrations"),
    ("The dev server listens on port 8080", "In development the server runs on port 8080"),
    (
        "The demo app deploys to Fly.io region ams with make deploy-fly",
        "Deployment: make deploy-fly pushes the app to Fly.io, region ams",
    ),
    ("The frontend is built with Vite", None),
]


def test_restatements_and_a_change_are_named_with_the_command_that_settles_them(
    proj: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    ids: dict[str, str] = {}
    for statement, restates in TEN:
        said = lore(proj, "facts", "add", statement)
        ids[statement] = re.match(r"Remembered (f_\d+)", said).group(1)  # type: ignore[union-attr]
        if restates is not None:
            first = ids[restates]
            assert first in said, f"{statement!r} named nothing of {first}: {said}"
            assert f'lore tidy forget {ids[statement]} --reason "same as ' in said
            assert "remember_fact" not in said and "revise_fact" not in said and "supersedes=" not in said
    fly = [ids[TEN[3][0]], ids[TEN[8][0]]]

    change = "The demo app now deploys to AWS ECS in eu-west-1 instead of Fly.io"
    said = lore(proj, "facts", "add", change)
    new = re.match(r"Remembered (f_\d+)", said).group(1)  # type: ignore[union-attr]
    assert "May replace:" in said and all(x in said.split("May replace:")[1] for x in fly), said
    assert f'lore facts add "{change}" --supersedes ' in said
    assert "remember_fact" not in said

    start = lore(proj, "session-start", "--client", "claude-code")
    lines = {line.split("[")[-1].split(" ")[0]: line for line in start.splitlines() if line.startswith("- ")}
    for old in fly:
        if old in lines:  # folded behind the other Fly.io fact, or shown with the mark
            assert f"superseded? see {new}" in lines[old], lines[old]
    assert any(f"superseded? see {new}" in line for line in lines.values())
    assert f"superseded? see {new}" not in lines[new]

    # `lore tidy` lists the restatements named (not folded) and what the change may have replaced,
    # the newer first.
    report = json.loads(lore(proj, "tidy", "--json"))
    maybe = [[i["id"] for i in c["items"]] for c in report["maybe_same"]]
    for statement, restates in TEN:
        folded = {i["id"] for d in report["duplicates"] for i in d["items"]}
        if restates is not None and ids[restates] not in folded:
            assert [ids[statement], ids[restates]] in maybe, (statement, maybe)
    listed = report["conflicts"]
    assert sorted([c["items"][0]["id"], c["items"][1]["id"]] for c in listed) == sorted([new, x] for x in fly)

    # Both hold for one of them: keeping them together settles its mark; confirming settles the rest.
    lore(proj, "tidy", "keep", new, fly[0])
    start = lore(proj, "session-start", "--client", "claude-code")
    marked = [line for line in start.splitlines() if "superseded?" in line]
    assert all(fly[0] not in line.split("[")[-1] for line in marked)
    lore(proj, "facts", "add", change, "--supersedes", fly[1])
    start = lore(proj, "session-start", "--client", "claude-code")
    assert "superseded?" not in start
    assert "1 fact replaced by a newer one" in start


def test_a_terminal_is_told_commands_and_an_agent_tools(
    proj: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    """Item 7: the CLI's errors named tools (`Call recall_facts to see the fact ids.`), an agent's
    answers name tool calls with their arguments."""
    work, env = proj
    wrong = cli.run("facts", "revise", "f_99", "Port 9000", env=env, cwd=work)
    assert (
        wrong.returncode == 1 and "`lore facts list`" in wrong.stderr and "recall_facts" not in wrong.stderr
    )
    many = ",".join(f"f_{i}" for i in range(1, 30))
    bad = cli.run("facts", "add", "Port 9000", "--supersedes", many, env=env, cwd=work)
    assert bad.returncode == 1 and "--supersedes f_4" in bad.stderr and 'supersedes="' not in bad.stderr


async def test_an_agent_is_told_tool_calls(
    proj: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = proj
    async with lore_session(env, cwd=work) as s:
        await ok(
            s, "remember_fact", statement="Deployment: make deploy-fly pushes the app to Fly.io, region ams"
        )
        moved = await ok(
            s, "remember_fact", statement="The demo app now deploys to AWS ECS in eu-west-1 instead of Fly.io"
        )
        assert moved.structured_content == {"id": "f_2", "space": "demo", "replaces": ["f_1"]}
        assert 'remember_fact again with supersedes="f_1"' in text(moved) and "lore facts add" not in text(
            moved
        )
        near = await ok(
            s, "remember_fact", statement="The demo app deploys to Fly.io region ams with make deploy-fly"
        )
        assert near.structured_content is not None and near.structured_content.get("likely") == ["f_1"]
        assert 'forget(id="f_3", reason="same as f_1")' in text(near)
