"""The infrastructure a team runs lore on, started by the tests themselves on 127.0.0.1: Debian's
PgBouncer (transaction pooling) in front of a test's PostgreSQL, Debian's HAProxy (round robin, no
stickiness) in front of `lore serve` replicas, and a PostgreSQL of a test's own (one it may restart).
Each is a child process on a free port, stopped by its PID (never by name).

PgBouncer refuses to run as root: as root it runs as the embedded server's own OS user
(lore.db.embedded.OS_USER), which may open that server's socket (peer authentication maps it)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import psycopg
import pytest

from lore.db import embedded
from support.lorehttp import free_port

PGBOUNCER = "/usr/sbin/pgbouncer"
HAPROXY = "/usr/sbin/haproxy"
MISSING = (
    "Debian's {name} is not installed: `make test` installs it as root (apt-get install pgbouncer "
    "haproxy); as a user run `sudo apt-get install -y pgbouncer haproxy`."
)


def require(binary: str) -> None:
    """Fail (never skip) when a binary `make test` installs is missing: the feature is untested then."""
    if not os.access(binary, os.X_OK):
        pytest.fail(MISSING.format(name=Path(binary).name))


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 10) -> None:
    """Stop one child by its PID: `sig`, then SIGKILL if it lingers."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait(timeout=5)


def _as_db_user() -> dict[str, Any]:
    """Popen's user/group for a program that must not run as root (PgBouncer)."""
    if os.geteuid() != 0:
        return {}
    return {"user": embedded.OS_USER, "group": embedded.OS_USER}


def _private_dir(prefix: str) -> Path:
    """A directory under /tmp the program's user owns (its config, log and password file)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    if os.geteuid() == 0:
        shutil.chown(path, user=embedded.OS_USER, group=embedded.OS_USER)
    return path


def _wait_for(log: Path, pattern: str, proc: subprocess.Popen[Any], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and re.search(pattern, log.read_text(errors="replace")):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


@dataclass
class Bouncer:
    """A PgBouncer in transaction mode in front of one database; `url` is the pooled URL."""

    url: str
    port: int
    dir: Path
    proc: subprocess.Popen[bytes]

    def log(self) -> str:
        path = self.dir / "pgbouncer.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        stop(self.proc, signal.SIGTERM)
        shutil.rmtree(self.dir, ignore_errors=True)


def start_pgbouncer(direct_url: str, *, pool_size: int = 4, attempts: int = 3) -> Bouncer:
    """PgBouncer (pool_mode = transaction, scram-sha-256 with a random password) listening on a free
    127.0.0.1 port, reaching the database of `direct_url` (an embedded server's socket URL)."""
    require(PGBOUNCER)
    parts = urlsplit(direct_url)
    socket_dir = parse_qs(parts.query)["host"][0]
    dbname = parts.path.lstrip("/") or "lore"
    server_user = parts.username or embedded.DB_USER
    password = secrets.token_hex(12)
    for _ in range(attempts):
        home = _private_dir("lore-pgbouncer-")
        port = free_port()
        (home / "users.txt").write_text(f'"lore" "{password}"\n')
        (home / "pgbouncer.ini").write_text(
            f"""[databases]
{dbname} = host={socket_dir} dbname={dbname} user={server_user}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = {home}/users.txt
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 500
server_lifetime = 3600
logfile = {home}/pgbouncer.log
"""
        )
        if os.geteuid() == 0:
            for name in ("users.txt", "pgbouncer.ini"):
                shutil.chown(home / name, user=embedded.OS_USER, group=embedded.OS_USER)
        proc = subprocess.Popen(
            [PGBOUNCER, str(home / "pgbouncer.ini")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            **_as_db_user(),
        )
        bouncer = Bouncer(f"postgresql://lore:{password}@127.0.0.1:{port}/{dbname}", port, home, proc)
        if _wait_for(home / "pgbouncer.log", rf"listening on 127\.0\.0\.1:{port}", proc, 10):
            return bouncer
        failed = bouncer.log()
        bouncer.stop()
        if "Address already in use" not in failed:
            raise AssertionError(f"pgbouncer did not start:\n{failed}")
    raise AssertionError("pgbouncer found no free port")


@dataclass
class Balancer:
    """HAProxy in front of replicas: `url` goes round robin to every server it finds ready."""

    url: str
    stats: str
    dir: Path
    proc: subprocess.Popen[bytes]

    def states(self) -> dict[str, str]:
        """Each replica's state as HAProxy sees it (UP, DOWN, ...), by server name (r1, r2, ...)."""
        csv = httpx2.get(f"{self.stats};csv", timeout=5).text
        header = csv.splitlines()[0].lstrip("# ").split(",")
        rows = [dict(zip(header, line.split(","), strict=False)) for line in csv.splitlines()[1:] if line]
        return {
            r["svname"]: r["status"] for r in rows if r.get("pxname") == "lore" and r["svname"][:1] == "r"
        }

    def wait(self, want: dict[str, str], timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            states = self.states()
            if all(states.get(name, "").startswith(state) for name, state in want.items()):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"HAProxy sees {states}, expected {want}")
            time.sleep(0.1)

    def stop(self) -> None:
        stop(self.proc, signal.SIGUSR1)  # soft stop: finish what is in flight
        shutil.rmtree(self.dir, ignore_errors=True)


def start_haproxy(backends: list[int], *, attempts: int = 3) -> Balancer:
    """HAProxy on a free 127.0.0.1 port: round robin over `backends` (127.0.0.1 ports), no stickiness,
    each checked on /readyz every 300 ms (down after 2 failures, up after 1 success); a request
    whose connection was refused goes to another server (`retries`, `option redispatch`), a request
    already sent is never sent twice."""
    require(HAPROXY)
    servers = "\n".join(
        f"    server r{i} 127.0.0.1:{port} check inter 300ms fall 2 rise 1"
        for i, port in enumerate(backends, start=1)
    )
    for _ in range(attempts):
        home = Path(tempfile.mkdtemp(prefix="lore-haproxy-", dir="/tmp"))
        port, stats = free_port(), free_port()
        (home / "haproxy.cfg").write_text(
            f"""global
    maxconn 2000

defaults
    mode http
    timeout connect 2s
    timeout client 90s
    timeout server 90s
    retries 2
    option redispatch

frontend lore_in
    bind 127.0.0.1:{port}
    default_backend lore

backend lore
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
{servers}

listen stats
    bind 127.0.0.1:{stats}
    stats enable
    stats uri /stats
"""
        )
        log = home / "haproxy.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen([HAPROXY, "-db", "-f", str(home / "haproxy.cfg")], stdout=out, stderr=out)
        balancer = Balancer(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{stats}/stats", home, proc)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                httpx2.get(balancer.stats, timeout=1)
                return balancer
            except httpx2.HTTPError:
                time.sleep(0.05)
        failed = log.read_text(errors="replace")
        balancer.stop()
        if "Address already in use" not in failed and "cannot bind" not in failed:
            raise AssertionError(f"haproxy did not start:\n{failed}")
    raise AssertionError("haproxy found no free port")


@dataclass(frozen=True)
class OwnPostgres:
    """A PostgreSQL of one test's own (never the per-worker one other tests share): `url` reaches it
    directly; `restart()` stops and starts it, as a managed database's failover or upgrade does."""

    url: str
    env: dict[str, str]

    def restart(self) -> None:
        embedded.stop(self.env)
        embedded.start(self.env)


@contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    root = Path(tempfile.mkdtemp(prefix="lore-own-pg-", dir="/tmp"))
    env = {"LORE_DATA_DIR": str(root)}
    try:
        url = embedded.start(env)
        with psycopg.connect(url) as conn:
            from lore.db import migrate

            migrate.upgrade(conn)
        yield OwnPostgres(url, env)
    finally:
        embedded.stop(env)
        shutil.rmtree(root, ignore_errors=True)
