"""Fixtures for tasks and messages: two or three spaces, and the embedder forced to fail.

Messages and tasks never touch the embedder (docs/design.md, Retrieval; Tasks and messages): every
test here runs with `LORE_EMBEDDER=broken`, in this process and in every lore process it starts.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from lore.core.config import Config, load_config
from lore.core.session import Origin
from lore.db import embedded, migrate


@pytest.fixture(autouse=True)
def broken_embedder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LORE_EMBEDDER", "broken")


@dataclass(frozen=True)
class Spaces:
    """alpha accepts from beta; beta accepts from nobody; gamma accepts from alpha."""

    env: dict[str, str]
    dirs: dict[str, Path]
    config: Config

    def origin(self, space: str, source: str = "test") -> Origin:
        return Origin(space, source, str(self.dirs[space]))


def write_config(path: Path, dirs: dict[str, Path]) -> None:
    path.write_text(
        f"""default_space = "alpha"

[[space]]
id = "alpha"
paths = ["{dirs["alpha"]}"]
accepts_from = ["beta"]

[[space]]
id = "beta"
paths = ["{dirs["beta"]}"]

[[space]]
id = "gamma"
paths = ["{dirs["gamma"]}"]
accepts_from = ["alpha"]
"""
    )


@pytest.fixture
def spaces(tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection) -> Spaces:
    dirs = {name: tmp_path / "code" / name for name in ("alpha", "beta", "gamma")}
    for d in dirs.values():
        d.mkdir(parents=True)
    write_config(Path(lore_env["LORE_CONFIG"]), dirs)
    env = {**lore_env, "LORE_EMBEDDER": "broken"}
    return Spaces(env, dirs, load_config(env))


@pytest.fixture
def private_db() -> Iterator[tuple[dict[str, str], str]]:
    """An embedded server of its own (its own LORE_DATA_DIR), for tests that stop and restart it.
    Never the shared session database of tests/conftest.py."""
    root = Path(tempfile.mkdtemp(prefix="lore-restart-", dir="/tmp"))
    env = {"LORE_DATA_DIR": str(root)}
    url = embedded.start(env)
    with psycopg.connect(url) as c:
        migrate.upgrade(c)
    try:
        yield env, url
    finally:
        embedded.stop(env)
        shutil.rmtree(root, ignore_errors=True)
