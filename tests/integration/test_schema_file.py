"""src/lore/db/schema.sql is the schema the migrations make: the migrated test database, dumped the
same way (scripts/schema.py), is that file to the byte. On PostgreSQL 18 only: another pg_dump
prints the same schema in other words. The database is a new one, migrated here: the shared test
database also holds what tests add at run time (an HNSW index for the test embedder's model)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import psycopg
import pytest

from lore.db import migrate

ROOT = Path(__file__).resolve().parents[2]


def _schema_script() -> object:
    spec = importlib.util.spec_from_file_location("schema_script", ROOT / "scripts" / "schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(os.environ.get("LORE_TEST_POSTGRES") == "16", reason="the file is PostgreSQL 18's dump")
def test_schema_sql_is_what_the_migrations_make(db_url: str) -> None:
    name = "lore_schema_file"
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
    fresh = db_url.replace("/lore?", f"/{name}?")
    try:
        with psycopg.connect(fresh) as conn:
            migrate.upgrade(conn)
        script = _schema_script()
        dumped = script.dump(fresh)  # type: ignore[attr-defined]
    finally:
        with psycopg.connect(db_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    committed = (ROOT / "src" / "lore" / "db" / "schema.sql").read_text()
    assert dumped == committed, "the migrations changed the schema: run `.venv/bin/python scripts/schema.py`"
    assert "CREATE TABLE public.facts" in committed and "lore_session_snapshot" in committed
