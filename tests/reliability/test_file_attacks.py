"""Files lore writes and reads, attacked as another local user would: a planted symlink next to an
export, a memory bank whose files point elsewhere, a hook log another uid can read.

The attacker is `nobody` (`setpriv --reuid=65534`); lore runs as the test's user (root in CI). Each
test failed before its fix (docs/reliability.md, Attacks tried: files and secrets)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from lore.core import hooklog
from reliability.conftest import LORE, Project

ROOT_ONLY = pytest.mark.skipif(
    os.geteuid() != 0, reason="switching to another uid needs root (CI runs as root)"
)
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NOBODY, *argv], capture_output=True, text=True, timeout=30, cwd="/")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory both users may write (a team share, a checkout with loose permissions)."""
    where = Path(tempfile.mkdtemp(prefix="lore-shared-", dir="/tmp"))
    where.chmod(0o777)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# --- lore export -o ---------------------------------------------------------------------------------


@ROOT_ONLY
def test_export_ignores_a_planted_partial_link_and_is_private(project: Project, shared: Path) -> None:
    assert project.lore("facts", "add", "acme deploys with make ship").returncode == 0
    victim = shared / "victim.txt"
    victim.write_text("precious\n")
    out = shared / "memory.jsonl"
    planted = as_nobody("ln", "-s", str(victim), str(out) + ".partial")
    assert planted.returncode == 0, planted.stderr

    done = project.lore("export", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious\n"  # the link was not followed
    assert not out.is_symlink() and out.is_file()
    assert mode(out) == 0o600
    assert "acme deploys with make ship" in out.read_text()
    peek = as_nobody("cat", str(out))
    assert peek.returncode != 0 and "Permission denied" in peek.stderr
    assert not [p for p in shared.iterdir() if p.name.startswith(".memory.jsonl")]  # no temp file left


@ROOT_ONLY
def test_export_over_a_planted_link_replaces_the_link(project: Project, shared: Path) -> None:
    """The final name planted as a link: the rename replaces the link, the file it names is kept."""
    victim = shared / "victim.txt"
    victim.write_text("precious\n")
    out = shared / "memory.jsonl"
    assert as_nobody("ln", "-s", str(victim), str(out)).returncode == 0
    assert project.lore("export", "-o", str(out)).returncode == 0
    assert victim.read_text() == "precious\n"
    assert not out.is_symlink() and mode(out) == 0o600


def test_export_to_a_missing_directory_says_so(project: Project, tmp_path: Path) -> None:
    done = project.lore("export", "-o", str(tmp_path / "nowhere" / "memory.jsonl"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "nowhere" in done.stderr


# --- lore import-markdown ------------------------------------------------------------------------


def test_import_markdown_skips_links_and_files_outside_the_folder(
    project: Project, conn: psycopg.Connection, tmp_path: Path
) -> None:
    bank = project.dir / "bank"
    (bank / "memory-bank").mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    (outside / "secret-plan.md").write_text("# Plan\n\nthe outside plan\n")
    (outside / "notes" / "activeContext.md").write_text("# Active\n\nan outside note\n")
    (bank / "progress.md").write_text("# Progress\n\nCheckout works.\n")
    (bank / "projectbrief.md").symlink_to("/etc/passwd")
    (bank / "memory-bank" / "plan.md").symlink_to(outside / "secret-plan.md")
    (bank / ".claude").symlink_to(outside / "notes", target_is_directory=True)

    done = project.lore("import-markdown", str(bank))
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    assert "projectbrief.md" in said and "plan.md" in said and "activeContext.md" in said
    assert "Skipped 3" in said and "symbolic link" in said and "outside" in said
    bodies = [r[0] for r in conn.execute("SELECT body FROM notes")]
    assert bodies == ["Checkout works."]


def test_import_markdown_refuses_a_named_file_that_is_a_link(
    project: Project, conn: psycopg.Connection
) -> None:
    (project.dir / "CLAUDE.md").symlink_to("/etc/passwd")
    done = project.lore("import-markdown", str(project.dir / "CLAUDE.md"))
    assert done.returncode == 1
    assert "symbolic link" in done.stderr and "Traceback" not in done.stderr
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


def test_import_markdown_never_blocks_on_a_fifo(project: Project, conn: psycopg.Connection) -> None:
    """A named pipe called progress.md would hang a plain read; it is not a regular file: skipped."""
    bank = project.dir / "bank"
    bank.mkdir()
    os.mkfifo(bank / "progress.md")
    (bank / "decisions.md").write_text("# Decisions\n\nUse PostgreSQL.\n")
    done = project.lore("import-markdown", str(bank))
    assert done.returncode == 0, done.stderr
    assert [r[0] for r in conn.execute("SELECT body FROM notes")] == ["Use PostgreSQL."]


# --- the hook log -----------------------------------------------------------------------------------


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A fresh data dir that other users can traverse, as ~/.local/share/lore under a 0755 home is."""
    where = Path(tempfile.mkdtemp(prefix="lore-data-", dir="/tmp"))
    where.chmod(0o755)
    try:
        yield where
    finally:
        shutil.rmtree(where, ignore_errors=True)


@ROOT_ONLY
def test_the_hook_log_is_private_to_its_user(data_dir: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(data_dir),
        "LORE_DATA_DIR": str(data_dir),
        "LORE_CONFIG": str(data_dir / "missing.toml"),
    }
    ran = subprocess.run(
        [LORE, "hook", "session-start", "--client", "claude-code"],
        input='{"cwd": "/srv/acme"}',
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert ran.returncode == 0 and "no lore config" in ran.stdout  # the agent is told
    log = hooklog.path(env)
    assert "no lore config" in log.read_text()
    assert mode(log.parent) == 0o700 and mode(log) == 0o600
    peek = as_nobody("cat", str(log))
    assert peek.returncode != 0 and "Permission denied" in peek.stderr


def test_an_old_world_readable_hook_log_is_made_private(tmp_path: Path) -> None:
    env = {"LORE_DATA_DIR": str(tmp_path)}
    log = hooklog.path(env)
    log.parent.mkdir(mode=0o755)
    log.write_text("")
    log.chmod(0o644)
    hooklog.append("claude-code", "session-start", True, "ok", env)
    assert mode(log) == 0o600
    assert [e.detail for e in hooklog.entries(env)] == ["ok"]


def test_the_hook_log_is_not_written_through_a_link(tmp_path: Path) -> None:
    env = {"LORE_DATA_DIR": str(tmp_path)}
    target = tmp_path / "elsewhere.txt"
    target.write_text("untouched\n")
    log = hooklog.path(env)
    log.parent.mkdir(mode=0o700)
    log.symlink_to(target)
    hooklog.append("claude-code", "session-start", False, "boom", env)  # best effort: never raises
    assert target.read_text() == "untouched\n"


def test_the_hook_log_rotation_stays_private(tmp_path: Path) -> None:
    env = {"LORE_DATA_DIR": str(tmp_path)}
    for n in range(2_000):
        hooklog.append("claude-code", "session-start", True, f"run {n} " + "x" * 300, env)
    log = hooklog.path(env)
    assert log.stat().st_size < 600 * 1024 and mode(log) == 0o600
    assert hooklog.entries(env)[-1].detail.startswith("run 1999")


def test_export_onto_a_directory_says_so_and_leaves_nothing(project: Project, tmp_path: Path) -> None:
    out = tmp_path / "exports"
    (out / "memory.jsonl").mkdir(parents=True)
    done = project.lore("export", "-o", str(out / "memory.jsonl"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["memory.jsonl"]
