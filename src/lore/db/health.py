"""What `lore doctor` reads from the database server: pgvector, the settings and access rules that
decide who can connect, Reads only."""

from __future__ import annotations

import psycopg

_ACCESS_SETTINGS = (
    "SELECT name, setting FROM pg_settings "
    "WHERE name IN ('listen_addresses', 'unix_socket_permissions', 'unix_socket_directories')"
)
_HBA_RULES = "SELECT type, auth_method FROM pg_hba_file_rules"
_VECTOR_INSTALLED = "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
_VECTOR_AVAILABLE = "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"


def pgvector(conn: psycopg.Connection) -> tuple[str | None, bool]:
    """(installed version or None, whether the server offers the extension at all)."""
    row = conn.execute(_VECTOR_INSTALLED).fetchone()
    available = conn.execute(_VECTOR_AVAILABLE).fetchone() is not None
    return (str(row[0]) if row else None), available


def access(conn: psycopg.Connection) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """The socket/TCP settings, and every pg_hba rule as (type, auth_method)."""
    settings = {str(name): str(value) for name, value in conn.execute(_ACCESS_SETTINGS).fetchall()}
    rules = [(str(kind), str(method)) for kind, method in conn.execute(_HBA_RULES).fetchall()]
    return settings, rules


PROBE_CHANNEL = "lore_probe_v1"


def statement_timeout(conn: psycopg.Connection) -> str:
    """The server's statement_timeout as the connection sees it ('0': none)."""
    row = conn.execute("SHOW statement_timeout").fetchone()
    return str(row[0]) if row else "0"


def listen_probe(listen_url: str, conn: psycopg.Connection, timeout: float = 2.0) -> float | None:
    """LISTEN on `listen_url`, NOTIFY through `conn` (the database URL): the seconds until the
    notification arrived, or None when none did within `timeout` (LISTEN through a transaction
    pooler: the server connection that listened went back to the pool and hears for nobody)."""
    import time
    import uuid

    token = uuid.uuid4().hex
    with psycopg.connect(
        listen_url, autocommit=True, connect_timeout=5, application_name="lore-doctor", prepare_threshold=None
    ) as listener:
        listener.execute(f"LISTEN {PROBE_CHANNEL}")
        started = time.monotonic()
        conn.execute("SELECT pg_notify(%s, %s)", (PROBE_CHANNEL, token))
        if not conn.autocommit:
            conn.commit()
        for note in listener.notifies(timeout=timeout):
            if note.payload == token:
                return time.monotonic() - started
    return None
