"""The order facts are shown in is written once, in SQL (lore_facts_ordered): the workspace's own
subject first, then facts with no subject, then the rest, each group newest first (a fact's own
time), ties by the newer lineage. Session start and recall_facts show the database's order as it
comes; nothing above the store sorts facts again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from support.runtime import one_space

from lore.core import ids
from lore.core.session import Origin
from lore.service import memory
from lore.service.runtime import Runtime
from lore.service.session_start import session_start
from lore.store import facts

T0 = datetime(2026, 6, 1, tzinfo=UTC)
# (statement, subject, days after T0): distinct enough that none folds into another
WRITTEN = [
    ("The staging cluster runs on three spot nodes", None, 1),
    ("Marketing pages are built with Astro", "web", 2),
    ("Billing retries failed charges twice a day", "app", 3),
    ("Every commit message starts with a ticket key", None, 4),
    ("Rate limits live in the gateway, not the handlers", "APP", 5),
    ("The handbook is published from the docs branch", "docs", 6),
    ("Feature flags are read from Consul at boot", "app", 5),  # ties with the 5th: newer lineage first
]


@pytest.fixture
def rt(tmp_path: Path, lore_env: dict[str, str]) -> Iterator[Runtime]:
    with one_space(tmp_path, lore_env) as runtime:
        yield runtime


def _write(conn: psycopg.Connection) -> list[int]:
    origin = Origin("w", "test", "/w")
    lineages = []
    for statement, subject, days in WRITTEN:
        fact = facts.remember(conn, origin, statement, subject=subject)
        conn.execute(
            "UPDATE facts SET stated_at = %s WHERE version_id = %s",
            (T0 + timedelta(days=days), fact.version_id),
        )
        lineages.append(fact.lineage)
    conn.commit()
    return lineages


def _sql_order(conn: psycopg.Connection, prefer: str) -> list[str]:
    rows = conn.execute("SELECT lineage FROM lore_facts_ordered(ARRAY['w'], %s)", (prefer,)).fetchall()
    return [ids.fact(lineage) for (lineage,) in rows]


def test_session_start_and_recall_show_facts_in_the_sql_order(rt: Runtime, conn: psycopg.Connection) -> None:
    n = _write(conn)
    session = rt.command_session(None)
    assert session.workspace_name == "app"
    expected = [ids.fact(n[i]) for i in (6, 4, 2, 3, 0, 5, 1)]  # app (any case), no subject, the rest
    assert _sql_order(conn, "app") == expected
    started = session_start(rt, session, "claude-code", via="cli")
    assert list(started.rendered.shown_ids) == expected
    assert _ids_in(started.text) == expected
    recalled = memory.recall(rt, session)
    assert [f.id for f in recalled.facts] == expected
    assert _ids_in(recalled.text(8000)) == expected


def _ids_in(text: str) -> list[str]:
    """The fact ids of a text's fact lines (`- statement [f_12 · subject · date]`), in order."""
    return [
        line.split("[")[-1].split(" ")[0].rstrip("]") for line in text.splitlines() if line.startswith("- ")
    ]
