"""The server's lifecycle: its status, start (serialised by a lock; the cluster made on the first
one) and stop, and the hold `lore db stop` puts on it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lore.core import outcomes
from lore.core.errors import DatabaseError
from lore.db.embedded.binaries import run
from lore.db.embedded.cluster import (
    DB_NAME,
    DB_USER,
    READY_MARKER,
    init,
    pgdata_dir,
    settle_files,
    write_cluster_file,
)
from lore.db.embedded.postmaster import (
    clear_dead_locks,
    log_tail,
    read_postmaster,
    started_safely,
    wait_postmaster,
)
from lore.db.embedded.sockets import SOCKET_NAME, make_url, server_options, socket_dir_for


@dataclass(frozen=True)
class Status:
    running: bool
    pgdata: Path
    pid: int | None
    socket_dir: Path | None
    url: str | None


def status(env: Mapping[str, str] | None = None) -> Status:
    pgdata = pgdata_dir(env)
    info = read_postmaster(pgdata)
    if info is None:
        return Status(False, pgdata, None, None, None)
    pid, sock, state = info
    if state != "ready" or sock is None or not (pgdata / READY_MARKER).exists():
        return Status(False, pgdata, pid, None, None)
    return Status(True, pgdata, pid, sock, make_url(sock))


def running_url(env: Mapping[str, str] | None = None) -> str | None:
    """The URL of the embedded server if it is up; never starts it (the hook's hot path)."""
    return status(env).url


@contextmanager
def _start_lock(pgdata: Path) -> Iterator[None]:
    """The start lock: `pg.lock`, mode 0600 (another user who could open it could hold the lock and
    make every `lore db start` wait), never through a link."""
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    lock = pgdata.parent / "pg.lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise DatabaseError(
            f"Cannot open the start lock {lock}: {exc.strerror}.",
            f"Remove {lock} if it is a link or not yours, then run `lore db start` again.",
        ) from None
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid() or not stat.S_ISREG(info.st_mode):
            raise DatabaseError(
                f"The start lock {lock} is not a file of yours.", f"Remove {lock}, then run `lore db start`."
            )
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# Written by `lore db stop`, removed by `lore db start`: while it is there, nothing starts the
# server by itself (a running server reconnecting, a session-start hook, an agent's `lore mcp`).
# A database stopped by a reboot has no such file and is started by the first session.
HELD = "stopped-by-lore-db-stop"
STOPPED_BY_USER = outcomes.HELD  # the one wording (lore.core.outcomes): hooks, CLI and doctor


def held(env: Mapping[str, str] | None = None) -> bool:
    """Whether the user stopped the server with `lore db stop` (and has not started it since)."""
    return os.path.lexists(pgdata_dir(env).parent / HELD)


def start(env: Mapping[str, str] | None = None, timeout: float = 60, *, release: bool = False) -> str:
    """Start the embedded server if it is not running; return its URL. Safe to call concurrently.

    After `lore db stop` it stays stopped: only `release=True` (`lore db start`, `lore run`, the
    user asking for it) starts it again; any other start raises DatabaseError saying so."""
    current = status(env)
    if current.url:
        return current.url
    pgdata = pgdata_dir(env)
    with _start_lock(pgdata):
        current = status(env)  # another process may have started it while we waited
        if current.url:
            return current.url
        marker = pgdata.parent / HELD
        if release:
            with contextlib.suppress(FileNotFoundError):
                marker.unlink()
        elif os.path.lexists(marker):
            raise DatabaseError(STOPPED_BY_USER, outcomes.HELD_HINT)
        if not (pgdata / "PG_VERSION").exists():
            if pgdata.exists() and any(pgdata.iterdir()):
                raise DatabaseError(
                    f"{pgdata} exists but holds no PostgreSQL cluster.",
                    "Move it away (or delete it if it is not yours) and run `lore db start` again.",
                )
            init(pgdata)
        rewritten = settle_files(pgdata)
        for _attempt in range(3):  # a postmaster killed while lore waited for it is started again
            sock_dir = _started(pgdata, env, timeout, rewritten)
            if sock_dir is not None:
                break
        else:
            raise DatabaseError(
                "The embedded PostgreSQL stopped each time it was started.",
                f"See {pgdata / 'postgres.log'}; `lore db status` shows the state.",
            )
        if not (pgdata / READY_MARKER).exists():  # a cluster made by an older lore
            _ensure_database(sock_dir)
            write_cluster_file(pgdata / READY_MARKER, f"{DB_NAME}\n")
        return make_url(sock_dir)


def _started(pgdata: Path, env: Mapping[str, str] | None, timeout: float, rewritten: bool) -> Path | None:
    """The socket dir of a ready postmaster, started here if none runs; None when the one found (or
    started) died while lore waited for it (a kill -9 that was not yet a zombie when looked at)."""
    running = read_postmaster(pgdata)
    if running is not None and not started_safely(pgdata):
        _stop_locked(pgdata, timeout)  # started by an older lore: restart with the safe options
        running = None
    if running is not None and wait_postmaster(pgdata, timeout, gone_after=0.5) is None:
        running = None  # it was dying: start a new one
    if running is None:
        sock = socket_dir_for(pgdata, env)
        clear_dead_locks(pgdata / "postmaster.pid", sock / f"{SOCKET_NAME}.lock")
        log = pgdata / "postgres.log"
        options = " ".join(shlex.quote(o) for o in server_options(sock))
        result = run(
            "pg_ctl",
            ["-D", str(pgdata), "-l", str(log), "-w", "-t", str(int(timeout)), "-o", options, "start"],
            timeout=timeout + 10,
        )
        if result.returncode != 0:
            tail = log_tail(log)
            raise DatabaseError(
                f"The embedded PostgreSQL did not start: {result.stdout.strip()[-300:]} {tail}",
                f"See {log}; `lore db status` shows the state. Another PostgreSQL on the same data dir?",
            )
    elif rewritten:
        run("pg_ctl", ["-D", str(pgdata), "reload"])
    return wait_postmaster(pgdata, timeout, gone_after=0.5)


def _ensure_database(sock: Path) -> None:
    psql = ["-h", str(sock), "-U", DB_USER, "-d", "postgres", "-tAX", "-v", "ON_ERROR_STOP=1"]
    found = run("psql", [*psql, "-c", f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'"])
    if found.returncode != 0:
        raise DatabaseError(
            f"Could not query the embedded server: {found.stdout.strip()}", "Run `lore doctor`."
        )
    if found.stdout.strip() != "1":
        made = run("psql", [*psql, "-c", f"CREATE DATABASE {DB_NAME}"])
        if made.returncode != 0 and "already exists" not in made.stdout:
            raise DatabaseError(
                f"Could not create database {DB_NAME}: {made.stdout.strip()}", "Run `lore doctor`."
            )


def stop(env: Mapping[str, str] | None = None, timeout: float = 60, *, hold: bool = False) -> bool:
    """Stop the embedded server; returns False when it was not running. `hold=True` (`lore db
    stop`) keeps it stopped until `lore db start`: see HELD."""
    pgdata = pgdata_dir(env)
    with _start_lock(pgdata):
        if hold:  # before stopping: a server reconnecting in the meantime must find it
            fd = os.open(pgdata.parent / HELD, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            os.close(fd)
        return _stop_locked(pgdata, timeout)


def stop_under(root_base: Path, timeout: float = 10) -> None:
    """Stop every embedded server placed under `root_base` (a test run's or a benchmark's own, before
    it is removed), as `lore db stop` does; one that will not stop does not keep the others running."""
    for pgdata in root_base.glob("embedded/*/pg"):
        with contextlib.suppress(Exception):
            _stop_locked(pgdata, timeout)


def _stop_locked(pgdata: Path, timeout: float) -> bool:
    import tempfile

    info = read_postmaster(pgdata)
    if info is None:
        return False
    result = run("pg_ctl", ["-D", str(pgdata), "-m", "fast", "-w", "-t", str(int(timeout)), "stop"])
    if result.returncode != 0 and read_postmaster(pgdata) is not None:
        raise DatabaseError(
            f"The embedded PostgreSQL did not stop: {result.stdout.strip()[-300:]}",
            "Retry `lore db stop`; if it persists, see postgres.log in the data dir.",
        )
    sock = info[1]
    if sock is not None and sock.parent == Path(tempfile.gettempdir()) and sock.name.startswith("lore-"):
        with contextlib.suppress(OSError):  # a fallback socket dir made for this run: now empty
            sock.rmdir()
    return True
