"""Shared fixtures: one real embedded PostgreSQL per test session, and a clean schema per test."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lore.db import embedded, migrate


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def pg_data_dir() -> Iterator[Path]:
    """A private LORE_DATA_DIR whose embedded server lives for the whole test session."""
    root = Path(tempfile.mkdtemp(prefix="lore-test-", dir="/tmp"))
    env = {"LORE_DATA_DIR": str(root)}
    embedded.start(env)
    try:
        yield root
    finally:
        embedded.stop(env)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def db_url(pg_data_dir: Path) -> str:
    url = embedded.start({"LORE_DATA_DIR": str(pg_data_dir)})
    with psycopg.connect(url) as conn:
        migrate.upgrade(conn)
    return url


@pytest.fixture
def conn(db_url: str) -> Iterator[psycopg.Connection]:
    """A connection to a freshly emptied schema."""
    with psycopg.connect(db_url) as c:
        tables = [r[0] for r in c.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'"
        )]  # fmt: skip
        c.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        for (seq,) in c.execute(
            "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
        ).fetchall():
            c.execute(f"ALTER SEQUENCE {seq} RESTART")
        c.commit()
        yield c


@pytest.fixture
def lore_env(pg_data_dir: Path, tmp_path: Path, conn: psycopg.Connection) -> dict[str, str]:
    """Environment for a lore subprocess: the test database, an isolated HOME and config path."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LORE_DATA_DIR": str(pg_data_dir),
        "LORE_CONFIG": str(tmp_path / "config.toml"),
    }
