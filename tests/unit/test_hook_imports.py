"""The hook's import budget: run it in a fresh interpreter and list what it imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = (
    "mcp",
    "starlette",
    "pydantic",
    "onnxruntime",
    "numpy",
    "psycopg",
    "psycopg_pool",
    "uvicorn",
    "anyio",
)

PROBE = """
import io, json, sys
sys.stdin = io.StringIO(sys.argv[1])
from lore.cli.main import main
code = main(["hook", sys.argv[2], "--client", "claude-code"])
sys.stderr.write("\\nMODULES=" + json.dumps(sorted({m.split(".")[0] for m in sys.modules})) + "\\n")
sys.exit(code)
"""


def hook_imports(
    env: dict[str, str], stdin: str, event: str = "session-start"
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, stdin, event], env=env, capture_output=True, text=True, timeout=60
    )
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES="))
    return done, set(json.loads(line.removeprefix("MODULES=")))


def test_hook_imports_nothing_heavy_even_when_it_fails(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LORE_DATA_DIR": str(tmp_path / "data"),
        "LORE_CONFIG": str(tmp_path / "missing.toml"),
    }
    done, modules = hook_imports(env, json.dumps({"cwd": str(tmp_path), "source": "startup"}))
    assert done.returncode == 0 and "no lore config file" in done.stdout  # what the agent reads
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
    assert "lore" in modules


def test_the_session_end_hook_imports_nothing_heavy_either(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LORE_DATA_DIR": str(tmp_path / "data"),
        "LORE_CONFIG": str(tmp_path / "missing.toml"),
    }
    stdin = json.dumps({"cwd": str(tmp_path), "session_id": "s", "hook_event_name": "Stop"})
    done, modules = hook_imports(env, stdin, "session-end")
    assert done.returncode == 0 and done.stdout == ""
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))


def test_a_hook_that_reads_the_stored_login_imports_nothing_heavy(tmp_path: Path) -> None:
    """With `lore login`'s file and no LORE_URL, the hooks go to the stored server (one that refuses
    here) with the standard library only."""
    from lore.core import login

    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LORE_DATA_DIR": str(tmp_path / "data"),
        "LORE_CONFIG": str(tmp_path / "missing.toml"),
    }
    login.write(env, login.Login("http://127.0.0.1:9", "alice", "lore_" + "a" * 43))
    for event in ("session-start", "prompt", "session-end"):
        stdin = json.dumps({"cwd": str(tmp_path), "session_id": "s", "hook_event_name": "Stop"})
        done, modules = hook_imports(env, stdin, event)
        assert done.returncode == 0, done.stderr
        assert modules.isdisjoint(HEAVY), (event, sorted(modules & set(HEAVY)))
    logged = (tmp_path / "data" / "logs" / "hook.log").read_text()
    assert "cannot reach the server" in logged and "lore_" not in logged  # it went to the stored server
    assert not (tmp_path / "data" / "pg").exists()
