"""The server's unix socket, the only way in: its private directory, the options every start passes
(no TCP listener), and the URL that reaches the database through it."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from lore.core.errors import DatabaseError
from lore.db.embedded.cluster import DB_NAME, DB_USER
from lore.db.embedded.osuser import db_uid, give_to_db_user, run_as_user

SOCKET_NAME = ".s.PGSQL.5432"
_MAX_SOCKET_PATH = 100


def make_url(socket_dir: Path, dbname: str = DB_NAME) -> str:
    return f"postgresql://{DB_USER}@/{dbname}?host={socket_dir}"


def server_options(socket_dir: Path) -> list[str]:
    """What every start passes to `postgres`: its socket, no TCP listener, a private socket."""
    return ["-k", str(socket_dir), "-h", "", "-c", "unix_socket_permissions=0700"]


def _private_dir(path: Path) -> None:
    """`path` as a directory only the server's OS user can enter: made 0700 when missing; when it
    exists it must be a real directory (not a symlink) owned by that user, and is tightened to 0700."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        os.mkdir(path, 0o700)
        os.chmod(path, 0o700)
        give_to_db_user(path)
        return
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise DatabaseError(
            f"{path} should be the embedded PostgreSQL's socket directory but is "
            f"{'a symlink' if stat.S_ISLNK(info.st_mode) else 'not a directory'}.",
            f"Remove {path} (lore makes it again, private) and run `lore db start`.",
        )
    if info.st_uid != db_uid():
        raise DatabaseError(
            f"{path} (the embedded PostgreSQL's socket directory) belongs to uid {info.st_uid}, "
            f"not to the database's user (uid {db_uid()}).",
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
    if len(str(candidate / SOCKET_NAME)) <= _MAX_SOCKET_PATH:
        _private_dir(candidate)
        return candidate
    env = os.environ if env is None else env
    runtime = env.get("XDG_RUNTIME_DIR")
    digest = hashlib.sha256(str(pgdata).encode()).hexdigest()[:12]
    if runtime and not run_as_user() and _owned_private(Path(runtime)):
        candidate = Path(runtime) / f"lore-{digest}"
        if len(str(candidate / SOCKET_NAME)) <= _MAX_SOCKET_PATH:
            _private_dir(candidate)
            return candidate
    made = Path(tempfile.mkdtemp(prefix=f"lore-{digest}-", dir=tempfile.gettempdir()))
    give_to_db_user(made)
    return made
