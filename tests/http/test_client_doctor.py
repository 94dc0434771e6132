"""`lore doctor` on a client (a machine signed in to a server): it checks the server (reachable, ready
and its schema, the token and its expiry, the pushed config against this machine's file, the last
outcome of each hook as the server recorded it) and never starts a process nor creates anything under
the data dir. It used to start a local embedded PostgreSQL there and fail on its empty schema."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.lorehttp import Server, push, token, two_space_config
from support.machines import Machine, machine


@contextmanager
def no_process_started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Every way this process could start another, watched while the doctor runs."""
    started: list[Any] = []
    real = subprocess.Popen.__init__

    def popen(self: Any, args: Any, *rest: Any, **kwargs: Any) -> None:
        started.append(args)
        real(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen)

    def refused(*args: Any, **kwargs: Any) -> int:
        started.append(args or "fork")
        raise AssertionError("the doctor started a process")

    monkeypatch.setattr(os, "fork", refused)
    monkeypatch.setattr(os, "posix_spawn", refused)
    yield started


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else ["(none)"]


def doctor(laptop: Machine, monkeypatch: pytest.MonkeyPatch, cwd: Path) -> tuple[int, str]:
    before = tree(laptop.data)
    with no_process_started(monkeypatch) as started:
        done = laptop.lore("doctor", cwd=cwd)
    assert started == [], started
    assert tree(laptop.data) == before  # nothing created under the data dir
    assert laptop.untouched()
    return done.returncode, done.stdout + done.stderr


def _client(tmp_path: Path, server: Server, conn: psycopg.Connection, project: Path, **kw: Any) -> Machine:
    push(conn, "alice", two_space_config(project))
    laptop = machine(tmp_path, "laptop")
    laptop.login(server.url, token(conn, "alice", **kw))
    config = Path(laptop.env["LORE_CONFIG"])
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(two_space_config(project))
    return laptop


def test_doctor_on_a_client_checks_the_server_and_starts_nothing(
    tmp_path: Path,
    signed_in: Server,
    conn: psycopg.Connection,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    laptop = _client(tmp_path, signed_in, conn, project, expires_at=datetime.now(UTC) + timedelta(days=3))
    assert "Remembered" in laptop.ok("facts", "add", "the doctor sees this", cwd=project / "work")
    laptop.hook("session-start", {"cwd": str(project / "work"), "source": "startup"})
    code, out = doctor(laptop, monkeypatch, project / "work")
    assert code == 0, out
    for line in (
        f"OK   this machine uses the server {signed_in.url} (`lore login` as alice): no local database",
        f"OK   server {signed_in.url} reachable",
        "OK   server schema current",
        "WARN token of alice runs out",  # three days left
        "OK   config pushed to the server (version 1) matches",
        "OK   hook claude-code session-start: last on the server",
    ):
        assert line in out, (line, out)
    for gone in ("database reachable", "schema version None", "embedder", "lore db start"):
        assert gone not in out, out

    # The pushed config drifts from this machine's file: said, with the fix.
    Path(laptop.env["LORE_CONFIG"]).write_text(two_space_config(project).replace('reads_from = ["home"]', ""))
    code, out = doctor(laptop, monkeypatch, project / "work")
    assert "WARN the config pushed to the server differs" in out and "work.reads_from" in out, out


def test_doctor_on_a_client_reports_the_servers_record_of_a_failed_hook_and_a_refused_token(
    tmp_path: Path,
    signed_in: Server,
    conn: psycopg.Connection,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    laptop = _client(tmp_path, signed_in, conn, project)
    push(conn, "alice", '[[space]]\nid = "work"\npaths = ["/nowhere"]\n')  # no space for the project
    told = laptop.hook("session-start", {"cwd": str(project / "work"), "source": "startup"})
    assert "lore:" in told
    code, out = doctor(laptop, monkeypatch, project / "work")
    assert code == 1 and "FAIL hook claude-code session-start: last on the server" in out, out
    assert ", config: " in out and "lore log show" in out
    conn.execute("UPDATE tokens SET revoked_at = now()")
    conn.commit()
    code, out = doctor(laptop, monkeypatch, project / "work")
    assert code == 1 and "FAIL token: the server refused the token `lore login` stored (401)" in out, out


def test_doctor_on_a_client_whose_server_is_down_fails_fast_and_starts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lore.core import login

    laptop = machine(tmp_path, "laptop")
    login.write(laptop.env, login.Login("http://127.0.0.1:9", "alice", "lore_" + "a" * 43))
    code, out = doctor(laptop, monkeypatch, laptop.home)
    assert code == 1 and "FAIL server http://127.0.0.1:9: cannot reach the server" in out, out
    assert "no config file here" in out and "lore_" not in out
