"""The audit of client names: each name an agent gave in MCP's `initialize` and the lore client id
its writes carry as `source` (lore.clients.canonical). One row per distinct name."""

from __future__ import annotations

from typing import Any

from lore.core.clients import canonical


def record(conn: Any, name: str, version: str | None) -> str:
    """Note that `name` was seen (now), and return the id its writes carry."""
    client = canonical(name)
    with conn.transaction():
        conn.execute(
            "INSERT INTO client_names (name, client, version) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO UPDATE SET client = EXCLUDED.client, version = EXCLUDED.version, "
            "last_seen = now()",
            (name[:200], client, version[:100] if version else None),
        )
    return client


def seen(conn: Any) -> list[tuple[str, str, str | None]]:
    """(name, client, version) of every name seen, the most recent first."""
    rows = conn.execute("SELECT name, client, version FROM client_names ORDER BY last_seen DESC, name")
    return [(r[0], r[1], r[2]) for r in rows.fetchall()]
