"""Month six, round 2 (issue 40, item 6): `lore facts add -` stored a fact whose text was `-` (exit 0),
shown at every session start after. `-` now reads the statement from standard input, as `lore notes
add -` does, and a statement that is only `-` or punctuation is refused everywhere (the CLI, the MCP
tool, `/api`: all through lore.core.validate.statement)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from support import cli
from support.mcpclient import lore_session, text

pytestmark = pytest.mark.anyio


@pytest.fixture
def here(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "w"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "w"\npaths = ["{work}"]\n')
    return work, lore_env


def statements(conn: psycopg.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT statement FROM facts ORDER BY version_id")]


def test_facts_add_dash_reads_standard_input(
    here: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = here
    piped = cli.run("facts", "add", "-", "--subject", "w", env=env, cwd=work, stdin="CI runs on every push\n")
    assert piped.returncode == 0, piped.stderr
    assert "Remembered f_1" in piped.stdout
    revised = cli.run(
        "facts", "revise", "f_1", "-", env=env, cwd=work, stdin="CI runs on every pull request\n"
    )
    assert revised.returncode == 0, revised.stderr
    assert statements(conn) == ["CI runs on every push", "CI runs on every pull request"]


@pytest.mark.parametrize("given", ["-", "--", "...", " - ", "—", "?!", "•", "+", "$"])
def test_a_statement_of_only_punctuation_is_refused_at_the_cli(
    given: str, here: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = here
    if given != "-":  # `-` itself means standard input
        argued = cli.run("facts", "add", "--", given, env=env, cwd=work)
        assert argued.returncode == 1 and "is only punctuation" in argued.stderr
    piped = cli.run("facts", "add", "-", env=env, cwd=work, stdin=given)
    assert piped.returncode == 1 and "is only punctuation" in piped.stderr
    assert statements(conn) == []
    empty = cli.run("facts", "add", "-", env=env, cwd=work, stdin="")
    assert empty.returncode == 1 and "statement is empty" in empty.stderr


async def test_a_statement_of_only_punctuation_is_refused_by_the_tool(
    here: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = here
    async with lore_session(env, cwd=work) as s:
        refused = await s.call_tool("remember_fact", {"statement": "-"})
        assert refused.is_error and "is only punctuation" in text(refused)
        fine = await s.call_tool("remember_fact", {"statement": "Port 8080"})
        assert not fine.is_error
    assert statements(conn) == ["Port 8080"]
