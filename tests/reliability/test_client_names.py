"""`source` is lore's client id whatever an agent calls itself in `initialize`, the same id the
installers, the hook log and doctor use; the name it gave is kept in the client_names audit. An
unknown name is stored as given."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from support.lorehttp import Server, bearer, mcp_session, push, signed_in, token, two_space_config
from support.mcpclient import lore_session, ok

from reliability.conftest import Project

pytestmark = pytest.mark.anyio
__all__ = ["signed_in"]  # the fixture: `lore serve --sign-in` on a free port


async def test_writes_carry_lores_id_and_the_given_name_is_audited(
    project: Project, conn: psycopg.Connection
) -> None:
    async with lore_session(project.env, cwd=project.dir, client="gemini-cli-mcp-client") as s:
        await ok(s, "remember_fact", statement="acme deploys on Fridays")
        await ok(s, "remember_note", body="the deploy guide")
        await ok(s, "file_task", title="rotate the keys", body="before Friday")
    async with lore_session(project.env, cwd=project.dir, client="brand-new-agent") as s:
        await ok(s, "remember_fact", statement="acme uses PostgreSQL 18")
    sources = conn.execute(
        "SELECT source FROM facts UNION ALL SELECT source FROM notes ORDER BY 1"
    ).fetchall()
    assert sorted(r[0] for r in sources) == ["brand-new-agent", "gemini", "gemini", "gemini"]
    tasks = conn.execute("SELECT from_source FROM tasks").fetchall()
    assert tasks == [("gemini",)]
    audit = conn.execute("SELECT name, client FROM client_names ORDER BY name").fetchall()
    assert audit == [("brand-new-agent", "brand-new-agent"), ("gemini-cli-mcp-client", "gemini")]
    # Each row keeps the name it was made from, beside lore's id.
    rows = conn.execute(
        "SELECT source, client_name FROM facts UNION ALL SELECT source, client_name FROM notes "
        "UNION ALL SELECT from_source, from_client_name FROM tasks "
        "UNION ALL SELECT source, client_name FROM task_events"
    ).fetchall()
    assert sorted(rows) == [
        ("brand-new-agent", "brand-new-agent"),
        *[("gemini", "gemini-cli-mcp-client")] * 5,  # fact, note, task note, task, its event
    ], rows


async def test_over_http_every_call_of_a_session_carries_lores_id(
    signed_in: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    """HTTP sessions resolve their workspace on each call: the second and later calls (the name is
    in the audit already) carry the id too."""
    secret = token(conn, "alice")
    push(conn, "alice", two_space_config(tmp_path))
    async with mcp_session(signed_in.url, bearer(secret, tmp_path / "work"), client="codex-mcp-client") as s:
        for n in range(3):
            fact = await ok(s, "remember_fact", statement=f"fact {n} from codex")
        assert fact.structured_content is not None
        await ok(s, "forget", id=fact.structured_content["id"], reason="a test")
        await ok(s, "send_message", to="home", body="hello from codex")
    sources = conn.execute("SELECT DISTINCT source, client_name FROM facts").fetchall()
    assert sources == [("codex", "codex-mcp-client")]
    assert conn.execute("SELECT source, client_name FROM forget_log").fetchall() == [
        ("codex", "codex-mcp-client")
    ]
    assert conn.execute("SELECT source, client_name FROM messages").fetchall() == [
        ("codex", "codex-mcp-client")
    ]
    assert conn.execute("SELECT name, client FROM client_names").fetchall() == [("codex-mcp-client", "codex")]
