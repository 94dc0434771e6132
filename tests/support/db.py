"""Database helpers shared by fixtures."""

from __future__ import annotations

import psycopg

TABLES = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'"
SEQUENCES = "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"


def empty_schema(db_url: str) -> None:
    """Every table of lore's schema emptied and every sequence restarted (ids start at 1 again)."""
    with psycopg.connect(db_url) as c:
        tables = [r[0] for r in c.execute(TABLES)]
        c.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
        for (seq,) in c.execute(SEQUENCES).fetchall():
            c.execute(f"ALTER SEQUENCE {seq} RESTART")
