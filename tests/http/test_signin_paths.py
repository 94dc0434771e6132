"""Sign-in mode never looks at its own disk for a user's path: the workspace a client names is on
the client's machine. Before, a config pushed with `remotes = ["*"]` plus a workspace naming a
directory of the server made lore read that directory's `.git/config` (and show its remote in the
422), and server symlinks changed which space a path resolved to."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from support.lorehttp import Server, bearer, push, token

pytestmark = pytest.mark.anyio
REMOTE = "git@secret.example:corp/payroll.git"


def _server_repo(root: Path) -> Path:
    """A directory of the server's that looks like a clone of a private repository."""
    repo = root / "srv" / "payroll"
    (repo / ".git").mkdir(parents=True)
    (repo / ".git" / "config").write_text(f'[remote "origin"]\n\turl = {REMOTE}\n')
    return repo


def _spaces(server: Server, secret: str, workspace: Path, **headers: str) -> httpx2.Response:
    return httpx2.get(
        f"{server.url}/api/session-start",
        params={"workspace": str(workspace), "client": "claude-code"},
        headers={**bearer(secret), **headers},
        timeout=10,
    )


def test_a_pushed_remote_pattern_never_reads_the_servers_git(
    signed_in: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    repo = _server_repo(tmp_path)
    secret = token(conn, "mallory")
    push(
        conn,
        "mallory",
        '[[space]]\nid = "a"\nremotes = ["*"]\n\n[[space]]\nid = "b"\nremotes = ["secret.example/*"]\n',
    )
    probe = _spaces(signed_in, secret, repo)
    assert "secret.example" not in probe.text and "payroll" not in probe.text.replace(str(repo), "")
    assert probe.status_code == 422, probe.text  # no path, no remote named, no default: no space
    assert "no space matches" in probe.json()["error"]


def test_a_remote_the_client_names_is_matched(signed_in: Server, conn: psycopg.Connection) -> None:
    secret = token(conn, "alice")
    push(conn, "alice", '[[space]]\nid = "api"\nremotes = ["github.com/acme/*"]\n')
    named = _spaces(
        signed_in, secret, Path("/home/alice/src/api"), **{"X-Lore-Remote": "git@github.com:acme/api.git"}
    )
    assert named.status_code == 200, named.text
    assert named.json()["space"] == "alice/api"


def test_paths_are_compared_as_written_not_through_the_servers_symlinks(
    signed_in: Server, conn: psycopg.Connection, tmp_path: Path
) -> None:
    real = tmp_path / "real" / "proj"
    real.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real.parent)
    secret = token(conn, "alice")
    push(
        conn,
        "alice",
        f'default_space = "other"\n[[space]]\nid = "other"\n\n[[space]]\nid = "proj"\npaths = ["{real}"]\n',
    )
    assert _spaces(signed_in, secret, real).json()["space"] == "alice/proj"
    through = _spaces(signed_in, secret, link / "proj")  # on the server a link to the same place
    assert through.status_code == 200 and through.json()["space"] == "alice/other", through.text
