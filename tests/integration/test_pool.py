"""The runtime's pool: autocommit reads in one round trip, writes committed by their own
transaction, and a connection the server ended (restart, `pg_terminate_backend`) never handed out
even when it was in use moments ago (the check round trip is skipped only for a connection whose
socket has nothing to read)."""

from __future__ import annotations

import anyio
import psycopg
import pytest

from lore.core.session import Origin
from lore.service.runtime import Runtime
from lore.store import facts

pytestmark = pytest.mark.anyio


@pytest.fixture
def env(lore_env: dict[str, str], conn: psycopg.Connection) -> dict[str, str]:
    with open(lore_env["LORE_CONFIG"], "w") as fh:
        fh.write('default_space = "work"\n[[space]]\nid = "work"\npaths = ["/nowhere"]\n')
    return {**lore_env, "LORE_DATABASE_URL": conn.info.dsn}


async def test_a_terminated_connection_is_not_handed_out(
    env: dict[str, str], conn: psycopg.Connection
) -> None:
    state = Runtime({**env, "LORE_POOL_SIZE": "1"}, "http")
    try:
        pid = await state.run(lambda c: c.execute("SELECT pg_backend_pid()").fetchone())
        assert pid is not None
        autocommit = await state.run(lambda c: c.autocommit)
        assert autocommit  # a read is one round trip: no BEGIN, no COMMIT
        with psycopg.connect(conn.info.dsn, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid[0],))
        await anyio.sleep(0.2)
        again = await state.run(lambda c: c.execute("SELECT pg_backend_pid()").fetchone())
        assert again is not None and again[0] != pid[0]  # a new connection, and no error
    finally:
        state.close()


async def test_a_write_commits_through_its_own_transaction(
    env: dict[str, str], conn: psycopg.Connection
) -> None:
    state = Runtime(env, "http")
    try:
        origin = Origin("work", "test", None)
        await state.run(lambda c: facts.remember(c, origin, "acme deploys on Fridays"))
        with psycopg.connect(conn.info.dsn) as other:  # another session sees it: committed
            assert other.execute("SELECT statement FROM facts").fetchall() == [("acme deploys on Fridays",)]
    finally:
        state.close()
