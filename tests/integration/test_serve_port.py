"""`lore serve` / `lore run` and their port: bound before anything says "up" (so `--port 0` reports
the real one and a client that reads the line can connect at once), a taken port is one line on
stderr with a free one to use instead, and `--help` says where the port comes from."""

from __future__ import annotations

import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx2

from lore.core import local_secret
from lore.db import embedded

LORE = str(Path(sys.executable).parent / "lore")


@contextmanager
def taken_port() -> Iterator[int]:
    """A port some other program listens on, for as long as the block runs."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen(1)
        yield int(other.getsockname()[1])


@contextmanager
def running(env: dict[str, str], *args: str) -> Iterator[tuple[subprocess.Popen[str], queue.Queue[str]]]:
    """`lore ARGS` in the background; its stdout and stderr lines arrive on one queue. Stopped by
    its PID (SIGINT, then SIGKILL) whatever happens."""
    proc = subprocess.Popen([LORE, *args], env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines: queue.Queue[str] = queue.Queue()

    def pump(stream: IO[str]) -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))

    readers = [threading.Thread(target=pump, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)]
    for reader in readers:
        reader.start()
    try:
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        for reader in readers:
            reader.join(timeout=5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def wait_for(
    lines: queue.Queue[str], pattern: str, proc: subprocess.Popen[str], timeout: float = 60
) -> re.Match[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            assert proc.poll() is None or not lines.empty(), f"exited {proc.returncode}: {seen}"
            continue
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"no line matching {pattern!r} within {timeout}s: {seen}")


def lore(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LORE, *args], env=env, capture_output=True, text=True, timeout=60)


def test_a_taken_port_is_one_line_with_a_free_one(lore_env: dict[str, str]) -> None:
    with taken_port() as port:
        done = lore(lore_env, "serve", "--port", str(port))
        assert done.returncode != 0
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "Traceback" not in done.stderr and f"port {port}" in done.stderr and "taken" in done.stderr
        suggested = re.search(r"is free: use --port (\d+)$", done.stderr.strip())
        assert suggested is not None, done.stderr
        free = int(suggested.group(1))
        assert free != port
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", free))  # what it suggested is free indeed

        # LORE_PORT, and `lore run`: the port is checked before the database is even started
        env = {**lore_env, "LORE_PORT": str(port)}
        run = lore(env, "run")
        assert run.returncode != 0 and run.stdout == "", run.stdout
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert re.search(r"use `lore run --port \d+` \(or LORE_PORT=\d+\)", run.stderr), run.stderr
        assert not Path(env["LORE_CONFIG"]).exists()  # nothing prepared for nothing
        assert lore(env, "serve").returncode != 0  # `lore serve` reads LORE_PORT too


def test_port_zero_reports_the_real_port_and_answers_at_once(lore_env: dict[str, str]) -> None:
    with running(lore_env, "serve", "--port", "0") as (proc, lines):
        port = int(wait_for(lines, r"serving http://127\.0\.0\.1:(\d+)/mcp", proc).group(1))
        assert port != 0
        # bound before the line was printed: no retry loop needed
        assert httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json() == {"ok": True}


def test_run_prints_the_real_port_and_how_to_get_memory_before_the_first_prompt(
    lore_env: dict[str, str],
) -> None:
    """And (Trust round 4, item 7) never the local secret: the suggested `claude mcp add` line carried
    it, into every local user's view of argv and into the shell's history. It names ${LORE_TOKEN}."""
    with running({**lore_env, "LORE_PORT": "0"}, "run") as (proc, lines):
        printed: list[str] = []
        while not printed or "Ctrl-C stops serving" not in printed[-1]:
            printed.append(wait_for(lines, r".*", proc).string)
        text = "\n".join(printed)
        found = re.search(r"claude mcp add --transport http lore http://127\.0\.0\.1:(\d+)/mcp .*", text)
        assert found is not None, text
        port = int(found.group(1))
        assert "lore install claude-code" in text and "first prompt" in text
        assert "--header 'Authorization: Bearer ${LORE_TOKEN}'" in found.group(0)
        assert 'export LORE_TOKEN="$(lore token local)"' in text
        secret = local_secret.path(lore_env).read_text().strip()
        assert secret.startswith("lore_") and secret not in text
        assert httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
        # Ctrl-C: it says what stopped (the server) and what keeps running (the database)
        proc.send_signal(signal.SIGINT)
        said = wait_for(lines, r"lore stopped serving", proc, timeout=30).string
        assert proc.wait(timeout=15) in (0, 130, -signal.SIGINT)
        assert f"lore stopped serving http://127.0.0.1:{port} " in said, said
        assert "The embedded PostgreSQL (" in said and "keeps running" in said, said
        assert "`lore db stop` stops it" in said, said
        assert embedded.running_url(lore_env) is not None  # it does
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # and the server is gone


def test_help_and_bad_ports(lore_env: dict[str, str]) -> None:
    for command in ("serve", "run"):
        text = " ".join(lore(lore_env, command, "--help").stdout.split())
        assert "--port" in text and "LORE_PORT" in text and "8765" in text, text
    bad = lore({**lore_env, "LORE_PORT": "eighty"}, "serve")
    assert bad.returncode != 0 and "LORE_PORT" in bad.stderr and "Traceback" not in bad.stderr
    out_of_range = lore(lore_env, "serve", "--port", "70000")
    assert out_of_range.returncode != 0 and "70000" in out_of_range.stderr
