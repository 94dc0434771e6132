"""Whether the database URL goes through a connection pooler in transaction mode, and where LISTEN
goes: the rules `lore serve`, `lore doctor` and `/readyz` share (docs/design.md, Poolers).

A transaction-mode pooler (PgBouncer's `pool_mode = transaction`, Supabase's and Neon's pooled
URLs, RDS Proxy) hands each transaction to whichever server connection is free. Two things break
through it, silently: server-side prepared statements (a statement prepared on one server
connection is run on another) and LISTEN (the server connection that listened goes back to the
pool, and its notifications reach nobody). So through such a pooler lore prepares nothing, LISTENs
on a direct URL of its own (`LORE_LISTEN_URL`, `[database] listen_url`) and, without one, finds
replies and arrivals by polling only (the backstop that also covers a missed notification).

`LORE_DATABASE_POOLER` (or `[database] pooler`): `transaction`, `session` or `none` say it;
`auto` (the default) takes a URL whose port is 6432 (PgBouncer's) or whose host names a pooler
(`pooler`, `pgbouncer`, `proxy`: Supabase, Neon, RDS Proxy) as a transaction pooler.
`LORE_LISTEN_URL=off` turns LISTEN off (the backstop alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

POOLERS = ("auto", "none", "session", "transaction")
POOLER_PORT = 6432
POOLER_WORDS = ("pooler", "pgbouncer", "proxy")
LISTEN_OFF = "off"
LISTEN_HINT = (
    "set LORE_LISTEN_URL (or [database] listen_url) to a direct URL of the same database (or one "
    "through a pooler in session mode)"
)


@dataclass(frozen=True)
class Plan:
    """How this process reaches the database: `pooled` (prepare nothing), where LISTEN goes (None:
    nowhere, replies and arrivals are found by the poll alone) and what to tell an operator."""

    pooled: bool
    why: str
    listen_url: str | None
    listen_why: str
    warning: str | None = None

    @property
    def listens(self) -> bool:
        return self.listen_url is not None


def pooler_of(url: str) -> str | None:
    """Why `url` looks like a transaction pooler's, or None (auto-detection, by its shape only)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    hosts = [parts.hostname or ""]
    query = parse_qs(parts.query)
    hosts += query.get("host", [])
    if port is None and query.get("port"):
        try:
            port = int(query["port"][0])
        except ValueError:
            port = None
    if port == POOLER_PORT:
        return f"its port is {POOLER_PORT}, PgBouncer's"
    for host in hosts:
        for word in POOLER_WORDS:
            if word in host.lower():
                return f"its host {host} names a pooler ({word})"
    return None


def choose(
    url: str, env: Mapping[str, str], listen_url: str | None = None, pooler: str | None = None
) -> Plan:
    """The plan for database `url`: the environment (`LORE_DATABASE_POOLER`, `LORE_LISTEN_URL`)
    wins over the config's `pooler` and `listen_url`."""
    setting = (env.get("LORE_DATABASE_POOLER") or pooler or "auto").strip().lower()
    if setting not in POOLERS:
        setting = "auto"  # lore.core.config refuses a bad value in the file; a bad env value: detect
    listen = (env.get("LORE_LISTEN_URL") or listen_url or "").strip()
    if setting == "transaction":
        pooled, why = True, "LORE_DATABASE_POOLER / [database] pooler says transaction"
    elif setting in ("none", "session"):
        pooled, why = False, f"LORE_DATABASE_POOLER / [database] pooler says {setting}"
    else:
        seen = pooler_of(url)
        pooled, why = (True, f"the URL looks pooled: {seen}") if seen else (False, "a direct URL")
    if listen.lower() == LISTEN_OFF:
        return Plan(pooled, why, None, "LISTEN is off (LORE_LISTEN_URL=off): replies found by polling")
    if listen:
        seen = pooler_of(listen) if setting == "auto" else None
        warning = (
            f"LORE_LISTEN_URL looks like a pooler's too ({seen}): LISTEN through a transaction pooler "
            f"never hears a notification → {LISTEN_HINT}"
            if seen
            else None
        )
        return Plan(pooled, why, listen, "LISTEN on LORE_LISTEN_URL / [database] listen_url", warning)
    if pooled:
        return Plan(
            pooled,
            why,
            None,
            "no LISTEN: the database URL goes through a transaction pooler; replies found by polling",
            f"listening would go through a pooler ({why}): live replies wait for the poll → {LISTEN_HINT}",
        )
    return Plan(pooled, why, url, "LISTEN on the database URL")
