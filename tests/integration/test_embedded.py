"""The embedded PostgreSQL: started on demand, shared, never duplicated, stopped on request."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from lore.db import embedded

LORE = str(Path(sys.executable).parent / "lore")


def _postmasters(pgdata: Path) -> list[int]:
    """PIDs of postgres processes serving `pgdata` whose parent is not postgres (the postmaster)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if cmd and cmd[0].endswith(b"/postgres") and str(pgdata).encode() in cmd:
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parent = Path(f"/proc/{ppid}/cmdline")
            try:
                if not parent.read_bytes().split(b"\0")[0].endswith(b"/postgres"):
                    found.append(int(entry.name))
            except OSError:
                found.append(int(entry.name))
    return found


def test_eight_processes_start_it_at_once_and_find_one_postmaster() -> None:
    root = Path(tempfile.mkdtemp(prefix="lore-race-", dir="/tmp"))
    env = {**os.environ, "LORE_DATA_DIR": str(root)}
    env.pop("LORE_DATABASE_URL", None)
    try:
        procs = [
            subprocess.Popen(
                [LORE, "db", "url"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(8)
        ]
        outputs = [p.communicate(timeout=120) for p in procs]
        assert all(p.returncode == 0 for p in procs), outputs
        urls = {out.strip() for out, _ in outputs}
        assert len(urls) == 1 and urls.pop().startswith("postgresql://")
        pgdata = root / "pg"
        assert len(_postmasters(pgdata)) == 1
        status = subprocess.run([LORE, "db", "status"], env=env, capture_output=True, text=True, check=True)
        assert "running" in status.stdout
        stop = subprocess.run([LORE, "db", "stop"], env=env, capture_output=True, text=True, check=True)
        assert stop.stdout.startswith("stopped;") and "until `lore db start`" in stop.stdout
        assert _postmasters(pgdata) == []
        assert embedded.running_url({"LORE_DATA_DIR": str(root)}) is None
        again = subprocess.run([LORE, "db", "stop"], env=env, capture_output=True, text=True, check=True)
        assert again.stdout.startswith("not running;")
    finally:
        embedded.stop({"LORE_DATA_DIR": str(root)})
        shutil.rmtree(root, ignore_errors=True)


def test_a_data_dir_that_is_not_a_cluster_is_refused(tmp_path: Path) -> None:
    root = Path(tempfile.mkdtemp(prefix="lore-bad-", dir="/tmp"))
    try:
        (root / "pg").mkdir()
        (root / "pg" / "stray.txt").write_text("not a database")
        import pytest

        from lore.core.errors import DatabaseError

        with pytest.raises(DatabaseError) as err:
            embedded.start({"LORE_DATA_DIR": str(root)})
        assert "holds no PostgreSQL cluster" in err.value.message and "lore db start" in err.value.hint
    finally:
        shutil.rmtree(root, ignore_errors=True)
