"""Fixtures for the reliability tests: one project in space `p` (plus `q`, which accepts from `p`),
and the fake embedder everywhere (embeddings are not what these tests are about)."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from support import cli

LORE = str(Path(sys.executable).parent / "lore")


@dataclass(frozen=True)
class Project:
    env: dict[str, str]
    dir: Path
    other: Path

    def lore(
        self, *args: str, stdin: str | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`lore ARGS` in this process (support/cli.py), in `cwd` or the project's folder."""
        return cli.run(*args, env=self.env, cwd=cwd or self.dir, stdin=stdin)


@pytest.fixture
def project(tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection) -> Project:
    here, there = tmp_path / "code" / "p", tmp_path / "code" / "q"
    here.mkdir(parents=True)
    there.mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "p"\npaths = ["{here}"]\n\n'
        f'[[space]]\nid = "q"\npaths = ["{there}"]\naccepts_from = ["p"]\n'
    )
    return Project({**lore_env, "LORE_EMBEDDER": "fake"}, here, there)
