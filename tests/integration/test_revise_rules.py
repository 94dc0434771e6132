"""A revision that changes nothing is refused by the admission step (lore.core.admission), whoever
calls it (the use case's revise_in: the tools, the CLI, /api, the web UI and `lore tidy`): no
arguments at all, or arguments that repeat the current version. Nothing is written either way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import psycopg
import pytest

from lore.core import admission
from lore.core.errors import InvalidInput
from lore.core.session import Acting, Origin
from lore.service import memory
from lore.store import facts

ORIGIN = Origin("s", "agent", "/w/s")
WHO = Acting(ORIGIN, ("s",))
FROM = datetime(2026, 3, 1, tzinfo=UTC)


def _versions(conn: psycopg.Connection) -> list[tuple[str, str | None, bool]]:
    rows = conn.execute("SELECT statement, subject, superseded_at IS NULL FROM facts ORDER BY version_id")
    return rows.fetchall()


@pytest.mark.parametrize(
    "change",
    [
        {},
        {"statement": "CI runs on push"},
        {"subject": "acme"},
        {"statement": "CI runs on push", "subject": "acme", "valid_from": FROM.isoformat()},
    ],
    ids=["nothing", "same statement", "same subject", "all the same"],
)
def test_a_revision_that_changes_nothing_is_refused(conn: psycopg.Connection, change: dict[str, Any]) -> None:
    fact = facts.remember(conn, ORIGIN, "CI runs on push", subject="acme", valid_from=FROM)
    conn.commit()
    with pytest.raises(InvalidInput) as err:
        memory.revise_in(conn, WHO, fact.lineage, admission.fact(revising=fact.lineage, **change))
    assert err.value.message.startswith("Nothing to change")
    assert "statement, subject, valid_from or valid_to" in err.value.hint
    conn.rollback()
    assert _versions(conn) == [("CI runs on push", "acme", True)]


def test_a_real_change_is_a_new_version(conn: psycopg.Connection) -> None:
    fact = facts.remember(conn, ORIGIN, "CI runs on push", subject="acme", valid_from=FROM)
    change = admission.fact("CI runs on push", "acme-api", revising=fact.lineage)
    memory.revise_in(conn, WHO, fact.lineage, change)
    conn.commit()
    assert _versions(conn) == [("CI runs on push", "acme", False), ("CI runs on push", "acme-api", True)]
