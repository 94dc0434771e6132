"""Tasks and messages in sign-in mode (`lore serve --sign-in`): a bare target id means the user's own
space (`work` is `alice/work` for alice), and no user can reach another user's inbox."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from support.lorehttp import Server, bearer, mcp_session, project, push, signed_in, token, two_space_config
from support.mcpclient import call, ok, text

pytestmark = pytest.mark.anyio
__all__ = ["project", "signed_in"]  # fixtures


async def test_targets_stay_inside_the_users_own_spaces(
    signed_in: Server, project: Path, conn: psycopg.Connection
) -> None:
    for user in ("alice", "bob"):
        push(conn, user, two_space_config(project))
    alice, bob = token(conn, "alice"), token(conn, "bob")
    async with mcp_session(signed_in.url, bearer(alice, project / "home")) as home:
        sent = await ok(home, "send_message", to="work", body="deploy after lunch?")
        assert sent.structured_content == {"id": "m_1", "to": "alice/work"}
        filed = await ok(home, "file_task", title="Rotate keys", body="before Friday", to="work")
        assert filed.structured_content is not None and filed.structured_content["space"] == "alice/work"
        other = await call(home, "send_message", to="bob/work", body="hi bob")
        assert other.is_error and "No space" in text(other)
    async with mcp_session(signed_in.url, bearer(bob, project / "work")) as bobs:
        seen = text(await ok(bobs, "read_messages"))
        assert "No unread messages." in seen and "No open tasks in space bob/work." in seen
    async with mcp_session(signed_in.url, bearer(alice, project / "work")) as work:
        seen = text(await ok(work, "read_messages"))
        assert "deploy after lunch?" in seen and "Rotate keys" in seen
    rows = conn.execute("SELECT from_space, to_space FROM messages").fetchall()
    assert rows == [("alice/home", "alice/work")]
