"""A workspace path is checked once (lore.core.workspace.check_path, when a WorkspaceSignal is built),
so every entry refuses the same paths with the same words: /api's `workspace`, the MCP header
X-Lore-Workspace, the CLI's `--workspace` and `lore which DIR`, the hosted hooks' root. A path over
4,096 characters or with a control character names no directory: refused, with what to do."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, bearer, mcp_session, push, run_lore, token
from support.mcpclient import call, text

from lore.core.errors import InvalidInput
from lore.core.session import SessionContext
from lore.core.workspace import MAX_WORKSPACE, WorkspaceSignal, check_path
from lore.service.session_start import with_root

pytestmark = pytest.mark.anyio

REFUSED = "is not a directory path"
NEXT = "name the directory the agent works in"
BAD = ["/w/a\nb", "/w/a\tb", "/w/\x1b[31mred", "/w/a\x7fb", "/w/" + "x" * MAX_WORKSPACE]


@pytest.mark.parametrize("value", BAD)
def test_no_signal_is_built_from_a_path_that_names_no_directory(value: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        WorkspaceSignal(Path(value), "--workspace")
    assert REFUSED in refused.value.message and "--workspace" in refused.value.message
    assert NEXT in refused.value.hint
    assert check_path("/w/ok dir/é", "x") == "/w/ok dir/é"


def test_a_root_the_client_names_badly_is_not_taken(tmp_path: Path) -> None:
    signal = WorkspaceSignal(tmp_path / "app", "hook cwd")
    session = SessionContext.__new__(SessionContext)  # only .signal is read before the root is refused
    object.__setattr__(session, "signal", signal)
    assert with_root(session, f"{tmp_path}\n/app") is session


@pytest.mark.parametrize("value", ["/w/a\nb", "/w/" + "x" * MAX_WORKSPACE])
def test_the_cli_refuses_it_with_the_next_step(lore_env: dict[str, str], value: str) -> None:
    for args in (("which", value), ("facts", "list", "--workspace", value)):
        out = run_lore(lore_env, *args)
        assert out.returncode != 0 and REFUSED in out.stderr and NEXT in out.stderr, (args, out.stderr)
        assert "Traceback" not in out.stderr


async def test_api_and_mcp_header_refuse_it_alike(
    signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    secret = token(conn, "alice")
    push(conn, "alice", f'[[space]]\nid = "work"\npaths = ["{project}/work"]\n')
    auth = {"Authorization": f"Bearer {secret}"}
    async with httpx2.AsyncClient(base_url=signed_in.url, headers=auth, timeout=30) as api:
        for value in ("/w/a\nb", "/w/a\x1bb"):
            got = await api.get("/api/session-start", params={"workspace": value})
            assert got.status_code == 400, got.text
            assert REFUSED in got.json()["error"] and NEXT in got.json()["hint"]
    headers = bearer(secret, project / "work") | {"X-Lore-Workspace": f"{project}/work\tx"}
    async with mcp_session(signed_in.url, headers) as session:
        result = await call(session, "recall_facts")
        assert result.is_error and REFUSED in text(result) and NEXT in text(result)
