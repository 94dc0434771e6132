"""First day, round 2 (item 5): `lore notes add - < file` stored a note whose body was `-`, and a
large note could not be given from a file; the note limit was said two ways depending on the size."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from support import cli

from lore.core import validate
from lore.core.errors import InvalidInput


@pytest.fixture
def here(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    work = tmp_path / "w"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "w"\npaths = ["{work}"]\n')
    return work, lore_env


def test_a_note_from_stdin_or_a_file(here: tuple[Path, dict[str, str]], conn: psycopg.Connection) -> None:
    work, env = here
    piped = cli.run("notes", "add", "-", env=env, cwd=work, stdin="# Deploy\n\nmake ship, then tag.\n")
    assert piped.returncode == 0, piped.stderr
    (work / "big.md").write_text("a line of the runbook\n" * 1000)  # 22 KB: more than an argument likes
    filed = cli.run("notes", "add", "--file", str(work / "big.md"), "--kind", "devenv", env=env, cwd=work)
    assert filed.returncode == 0, filed.stderr
    bodies = [r[0] for r in conn.execute("SELECT body FROM notes ORDER BY lineage")]
    assert bodies[0] == "# Deploy\n\nmake ship, then tag." and len(bodies[1]) > 20_000
    (work / "huge.md").write_text("x" * 2_000_000)
    refused = cli.run("notes", "add", "--file", str(work / "huge.md"), env=env, cwd=work)
    assert refused.returncode == 1 and "the limit is 32,768 bytes (32 KiB)" in refused.stderr
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (2,)


@pytest.mark.parametrize("size", [40_000, 108_000, 2_000_000])
def test_one_limit_and_one_message_for_a_note_of_any_size(size: int) -> None:
    with pytest.raises(InvalidInput, match=f"body is {size:,} bytes; the limit is 32,768 bytes"):
        validate.body("x" * size)
