"""As root, the embedded server runs as an OS user of its own (PostgreSQL refuses to run as root):
who that user is, which directories it can reach, and what lore hands over or opens to it."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

from lore.core.errors import DatabaseError

# PostgreSQL refuses to run as root; as root we run it as this unprivileged system user.
OS_USER = "lore-postgres"


# As root the server runs as OS_USER, which must reach the cluster and the binaries. lore never opens
# a directory it did not make to other users for that (root's home stays 0700): a data dir or a
# wheel that OS_USER cannot reach is given a place under this base (LORE_ROOT_BASE moves it).
ROOT_BASE = "/var/lib/lore"


def root_base(env: Mapping[str, str] | None) -> Path:
    """LORE_ROOT_BASE of `env`, else of this process (a machine's setting, not one command's),
    else ROOT_BASE."""
    source = os.environ if env is None else env
    return Path(source.get("LORE_ROOT_BASE") or os.environ.get("LORE_ROOT_BASE") or ROOT_BASE)


def reachable(path: Path) -> bool:
    """Whether another user can pass through every existing directory above and at `path`."""
    for parent in [path, *path.parents]:
        try:
            mode = parent.stat().st_mode
        except FileNotFoundError:
            continue  # made by lore later, 0755 under the usual umask (and o+x by lore if not)
        if not mode & stat.S_IXOTH:
            return False
    return True


def run_as_user() -> str | None:
    return OS_USER if os.geteuid() == 0 else None


def ensure_os_user() -> None:
    import pwd

    try:
        pwd.getpwnam(OS_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OS_USER],
            check=True,
            capture_output=True,
        )


def db_uid() -> int:
    """The uid the server runs as (and that owns its data and socket directories)."""
    import pwd

    user = run_as_user()
    return pwd.getpwnam(user).pw_uid if user else os.geteuid()


def client_users() -> list[str]:
    """OS users let in by peer authentication: whoever runs lore, the server's own user, root."""
    import pwd

    users = {pwd.getpwuid(os.geteuid()).pw_name, "root"}
    if run_as_user():
        users.add(OS_USER)
    return sorted(users)


def open_for_db_user(parent: Path) -> None:
    """As root: let the server's OS user pass through the cluster's parent (lore's own directory: the
    data dir, or its place under the root base), never through a directory above it: those must be
    open already (pgdata_dir chose a place where they are; a cluster made by an older lore under a
    closed home is refused with the fix)."""
    base = root_base(None)
    ours = (
        [parent, *(d for d in parent.parents if d.is_relative_to(base))]
        if parent.is_relative_to(base)
        else [parent]
    )
    for directory in ours:  # lore made these: the cluster's parent, and its place under the root base
        mode = directory.stat().st_mode
        if not mode & stat.S_IXOTH:
            directory.chmod(mode | stat.S_IXOTH)
    if not reachable(parent.parent):
        raise DatabaseError(
            f"As root, the embedded PostgreSQL runs as the {OS_USER} user, which cannot reach {parent} "
            "(a directory above it is closed to other users).",
            f"Set LORE_DATA_DIR to a directory {OS_USER} can reach (for example {ROOT_BASE}/data), "
            "or run lore as an ordinary user.",
        )


def give_to_db_user(path: Path) -> None:
    """As root: hand a directory lore has just created to the server's OS user."""
    import shutil

    if run_as_user():
        shutil.chown(path, user=OS_USER, group=OS_USER)
