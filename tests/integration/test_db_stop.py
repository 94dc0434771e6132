"""First day, round 2, item 4: `lore db stop` sticks while a server is up. Before, a running
`lore serve` logged connection errors, started the database again by itself, and Ctrl-C printed
`psycopg_pool.PoolClosed`. Now each call says the database was stopped by `lore db stop` and what
to do, the database stays stopped, `lore db start` brings every call back without restarting the
server, and Ctrl-C exits without a traceback. A session-start hook says the same in one line."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from support.lorehttp import start_server

from lore.db import embedded

LORE = str(Path(sys.executable).parent / "lore")


@pytest.fixture
def own_cluster() -> Iterator[dict[str, str]]:
    """A cluster of this test's own (stopping the session's would stop every other test), ended by
    PID at the end whatever happens."""
    root = Path(tempfile.mkdtemp(prefix="lore-stop-", dir="/tmp"))
    work = root / "work"
    work.mkdir()
    (root / "home").mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "LORE_DATA_DIR": str(root / "data"),
        "LORE_CONFIG": str(root / "config.toml"),
        "LORE_EMBEDDER": "fake",
        "LORE_HOOK_DEADLINE": "3",
        **({"LORE_ROOT_BASE": os.environ["LORE_ROOT_BASE"]} if "LORE_ROOT_BASE" in os.environ else {}),
    }
    Path(env["LORE_CONFIG"]).write_text(
        f'default_space = "solo"\n[[space]]\nid = "solo"\npaths = ["{work}"]\n'
    )
    embedded.start(env)
    try:
        yield env
    finally:
        with contextlib.suppress(Exception):
            embedded.stop(env, timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def lore(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LORE, *args], env=env, capture_output=True, text=True, timeout=120)


def test_a_stopped_database_stays_stopped_and_a_running_server_says_so(
    own_cluster: dict[str, str], tmp_path: Path
) -> None:
    env = own_cluster
    work = Path(env["LORE_CONFIG"]).parent / "work"
    with start_server(env, tmp_path / "serve.log", process=True) as server:  # its own signals
        headers = server.local(work)
        added = httpx2.post(
            f"{server.url}/api/facts", json={"statement": "deploys go through make ship"}, headers=headers
        )
        assert added.status_code == 201, added.text

        stopped = lore(env, "db", "stop")
        assert stopped.returncode == 0 and "until `lore db start`" in stopped.stdout, stopped
        for _ in range(3):  # each call says so, at once, and none starts the database again
            began = time.monotonic()
            got = httpx2.get(
                f"{server.url}/api/facts", params={"workspace": str(work)}, headers=headers, timeout=30
            )
            assert got.status_code == 503, got.text
            body = got.json()
            assert "stopped by `lore db stop`" in body["error"] and "lore db start" in body["hint"], body
            assert time.monotonic() - began < 5
        time.sleep(1)
        assert embedded.running_url(env) is None, "the server started the database the user stopped"

        hook = subprocess.run(
            [LORE, "hook", "session-start", "--client", "claude-code"],
            input=json.dumps({"hook_event_name": "SessionStart", "cwd": str(work), "session_id": "s1"}),
            env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert hook.returncode == 0, hook.stderr
        told = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "stopped by `lore db stop`" in told and "lore db start" in told, told
        assert embedded.running_url(env) is None, "the hook started the database the user stopped"

        started = lore(env, "db", "start")
        assert started.returncode == 0, started
        back = httpx2.get(
            f"{server.url}/api/facts", params={"workspace": str(work)}, headers=headers, timeout=30
        )
        assert back.status_code == 200 and "make ship" in back.text, back.text

        lore(env, "db", "stop")
        server.stop()  # SIGINT, as Ctrl-C, while the database is stopped
    logs = server.logs()
    assert "Traceback" not in logs and "PoolClosed" not in logs, logs[-3000:]


def test_lore_run_is_the_user_asking_so_it_starts_a_held_database(own_cluster: dict[str, str]) -> None:
    env = own_cluster
    assert lore(env, "db", "stop").returncode == 0
    assert embedded.held(env)
    proc = subprocess.Popen(
        [LORE, "run", "--port", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 90
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            if "lore is up" in line or not line:
                break
        assert any("lore is up" in line for line in seen), seen
        assert embedded.running_url(env) is not None and not embedded.held(env)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()
