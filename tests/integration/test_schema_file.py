"""src/lore/db/schema.sql is the schema the migrations make: the migrated test database, dumped the
same way (scripts/schema.py), is that file to the byte. On PostgreSQL 18 only: another pg_dump
prints the same schema in other words."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _schema_script() -> object:
    spec = importlib.util.spec_from_file_location("schema_script", ROOT / "scripts" / "schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(os.environ.get("LORE_TEST_POSTGRES") == "16", reason="the file is PostgreSQL 18's dump")
def test_schema_sql_is_what_the_migrations_make(db_url: str) -> None:
    script = _schema_script()
    dumped = script.dump(db_url)  # type: ignore[attr-defined]
    committed = (ROOT / "src" / "lore" / "db" / "schema.sql").read_text()
    assert dumped == committed, "the migrations changed the schema: run `.venv/bin/python scripts/schema.py`"
    assert "CREATE TABLE public.facts" in committed and "lore_session_snapshot" in committed
