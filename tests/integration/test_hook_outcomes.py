"""Every outcome of a hook is seen (docs/design.md, Agent events): a run its agent killed is found by the
next run, recorded and named by `lore doctor`; an empty space is one line the agent reads; the prompt
hook says a failure once per session, not before every prompt; the spool that does not drain is in
`lore doctor`."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import psycopg
import pytest
from support import cli

from lore.core import hooklog, hookruns, spool

LORE = str(Path(sys.executable).parent / "lore")


@pytest.fixture
def work(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    where = tmp_path / "acme-api"
    where.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "work"\npaths = ["{where}"]\n')
    return where, lore_env


def run_hook(env: dict[str, str], event: str, payload: Mapping[str, object]) -> str:
    done = subprocess.run(
        [LORE, "hook", event, "--client", "claude-code"],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def test_a_run_its_agent_killed_is_found_by_the_next_and_named_by_doctor(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    with socket.socket() as silent:  # a server that accepts and never answers: the hook waits
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        hosted = {**env, "LORE_URL": f"http://127.0.0.1:{silent.getsockname()[1]}", "LORE_TOKEN": "x"}
        proc = subprocess.Popen(
            [LORE, "hook", "session-start", "--client", "claude-code"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=hosted,
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"cwd": str(where), "source": "startup"}).encode())
        proc.stdin.close()
        deadline = time.monotonic() + 30
        while not hookruns.abandoned(env, take=False) and not _markers(env) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _markers(env), "the hook never left its marker"
        os.kill(proc.pid, signal.SIGKILL)  # what an agent does at its hook timeout
        proc.wait()
    doctor = cli.run("doctor", env=env, cwd=where).stdout
    assert "hook claude-code session-start: the run that started" in doctor and "never finished" in doctor

    run_hook(env, "session-start", {"cwd": str(where), "source": "startup"})
    killed = [e for e in hooklog.entries(env) if e.detail.startswith("killed:")]
    assert len(killed) == 1 and "never finished: its agent stopped it" in killed[0].detail
    assert hookruns.abandoned(env, take=False) == []  # reported once
    listed = json.loads(cli.run("log", "--json", env=env, cwd=where).stdout)
    assert [r["outcome"] for r in listed if r["outcome"] == "killed"] == ["killed"]


def _markers(env: dict[str, str]) -> list[str]:
    try:
        return os.listdir(hookruns.folder(env))
    except OSError:
        return []


def test_an_empty_space_is_one_line_saying_lore_is_there_and_it_is_recorded(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    out = run_hook(env, "session-start", {"cwd": str(where), "source": "startup", "session_id": "s1"})
    told = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert told.startswith("lore: no memory stored in space work yet.") and "remember_fact" in told
    row = conn.execute("SELECT kind, outcome, text, session_id FROM injections").fetchone()
    assert row == ("session-start", "nothing", told, "s1")


def test_the_prompt_hook_says_a_failure_once_per_session(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection, tmp_path: Path
) -> None:
    where, env = work
    down = {**env, "LORE_DATABASE_URL": f"postgresql://postgres@/lore?host={tmp_path}/gone"}
    prompt = {"cwd": str(where), "session_id": "s-1", "prompt": "hi"}
    first = run_hook(down, "prompt", prompt)
    told = json.loads(first)["hookSpecificOutput"]
    assert told["hookEventName"] == "UserPromptSubmit"
    assert told["additionalContext"].startswith("lore: the shared memory is unavailable in this session")
    assert run_hook(down, "prompt", prompt) == ""  # said once
    assert run_hook(down, "prompt", {**prompt, "session_id": "s-2"}) != ""  # another session is told
    assert run_hook(env, "prompt", prompt) == ""  # back: nothing arrived, nothing said
    assert run_hook(down, "prompt", prompt) != ""  # down again: said again


def test_doctor_shows_a_spool_that_does_not_drain(work: tuple[Path, dict[str, str]]) -> None:
    where, env = work
    made = spool.add(env, "record", spool.LOCAL, "k", {"kind": "session-start"})
    assert made is not None
    old = time.time() - 3600
    os.rename(made, made.with_name(f"{int(old * 1e9):020d}-1-abcd.json"))
    down = {**env, "LORE_DATABASE_URL": f"postgresql://postgres@/lore?host={where}/gone"}
    doctor = cli.run("doctor", env=down, cwd=where).stdout
    assert "spool: 1 hook writes wait in" in doctor and "it does not drain" in doctor
