"""The cluster: its directory, the files lore writes into it (its access rules and settings, opened
without following a link), its first making (atomic: made beside its place, then renamed in), and
the audit of who could reach the server."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from lore.core.errors import DatabaseError
from lore.core.paths import data_dir
from lore.db.embedded.binaries import run
from lore.db.embedded.osuser import (
    OS_USER,
    client_users,
    db_uid,
    ensure_os_user,
    give_to_db_user,
    open_for_db_user,
    reachable,
    root_base,
    run_as_user,
)

DB_NAME = "lore"
DB_USER = "postgres"


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


def pgdata_dir(env: Mapping[str, str] | None = None) -> Path:
    """`<data dir>/pg`; as root, when the data dir's existing parents are closed to other users (a
    home of mode 0700), `<root base>/embedded/<hash of the data dir>/pg` instead. A cluster that
    exists already stays where it is. (The data dir itself is lore's: it may be opened for passing.)"""
    base = data_dir(env) / "pg"
    if os.geteuid() != 0 or base.exists() or reachable(base.parent.parent):
        return base
    import hashlib

    digest = hashlib.sha256(str(Path(os.path.abspath(base.parent))).encode()).hexdigest()[:16]
    return root_base(env) / "embedded" / digest / "pg"


def ident_map(users: list[str]) -> str:
    """pg_ident.conf: each OS user allowed in, mapped to the database user."""
    lines = ["# lore: OS users that may connect (as database user postgres). Rewritten on each start."]
    for user in users:
        token = user if re.fullmatch(r"[A-Za-z0-9_.-]+", user) else '"' + user.replace('"', '""') + '"'
        lines.append(f"lore {token} {DB_USER}")
    return "\n".join(lines) + "\n"


def settle_files(pgdata: Path) -> bool:
    """lore's access rules and settings in the cluster's files; True when anything was rewritten."""
    changed = False
    for name, wanted in (("pg_hba.conf", HBA), ("pg_ident.conf", ident_map(client_users()))):
        path = pgdata / name
        current = _read_cluster_file(path)
        if current != wanted:
            write_cluster_file(path, wanted)
            changed = True
    conf = pgdata / "postgresql.conf"
    if _SETTINGS_MARK not in (_read_cluster_file(conf) or ""):
        write_cluster_file(conf, _SETTINGS, append=True)
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
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_uid not in (db_uid(), os.geteuid()):
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


def write_cluster_file(path: Path, text: str, *, append: bool = False) -> None:
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
        if run_as_user():  # the server reads it as its own user
            import pwd

            entry = pwd.getpwnam(OS_USER)
            os.fchown(handle.fileno(), entry.pw_uid, entry.pw_gid)


def _clear_stale_inits(parent: Path) -> None:
    """Temporary clusters of first starts that were killed (we hold the start lock: none is live)."""
    import shutil

    for stale in parent.glob(f"{_INIT_PREFIX}*"):
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)


def init(pgdata: Path) -> None:
    """Make a whole cluster (settings, access rules, the `lore` database) beside `pgdata`, then
    rename it into place: a kill at any point leaves no half-made cluster at `pgdata`."""
    import shutil
    import tempfile

    parent = pgdata.parent
    _clear_stale_inits(parent)
    if run_as_user():
        ensure_os_user()
        open_for_db_user(parent)
    work = Path(tempfile.mkdtemp(prefix=_INIT_PREFIX, dir=parent))  # 0700, ours: just created
    try:
        give_to_db_user(work)
        initdb = ["-D", str(work), "-U", DB_USER, "--auth-local=peer", "--auth-host=reject"]
        result = run("initdb", [*initdb, "--encoding=UTF8", "--no-instructions"])
        if result.returncode != 0:
            raise DatabaseError(
                f"initdb failed for {pgdata}: {result.stdout.strip()[-500:]}",
                f"Check that {parent} is writable and has free space, then run `lore db start` again.",
            )
        settle_files(work)
        made = run(
            "postgres",
            ["--single", "-D", str(work), "-h", "", "-c", "unix_socket_permissions=0700", "postgres"],
            stdin=f"CREATE DATABASE {DB_NAME};\n",
        )
        if made.returncode != 0 or "ERROR" in made.stdout:
            raise DatabaseError(
                f"Could not create the {DB_NAME} database: {made.stdout.strip()[-500:]}",
                f"Check free space in {parent}, then run `lore db start` again.",
            )
        write_cluster_file(work / READY_MARKER, f"{DB_NAME}\n")
        if pgdata.exists():
            pgdata.rmdir()  # empty (checked by the caller)
        os.rename(work, pgdata)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def initialised(env: Mapping[str, str] | None = None) -> bool:
    """Whether the cluster exists (a start then takes a fraction of a second; a first one, seconds)."""
    return (pgdata_dir(env) / "PG_VERSION").exists()


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
