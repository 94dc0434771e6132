"""Fixtures for the agent tests: a project in a configured space, an isolated HOME, `lore install`
run for real, and (e2e) the pinned agent CLIs from npm with a runner that never leaves a process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest

from lore.core.session import Origin
from lore.store import facts

from . import npm

VENV_BIN = Path(sys.executable).parent
LORE = str(VENV_BIN / "lore")
#: Copied from the developer's environment when set; everything else (API keys, XDG_*, CODEX_HOME,
#: LORE_*) is dropped so no real credential or config reaches an agent, a hook or a server.
_ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")


@dataclass(frozen=True)
class Project:
    root: Path  # the project directory (space `alpha`)
    other: Path  # a directory in space `beta`, which `alpha` may not read
    home: Path  # the isolated HOME the agent and `lore install` see
    env: dict[str, str]  # the environment of every process of the test

    def remember(self, conn: psycopg.Connection, statement: str, subject: str | None = None) -> None:
        facts.remember(conn, Origin("alpha", "cli", str(self.root)), statement, subject=subject)
        conn.commit()

    def secret(self, conn: psycopg.Connection, statement: str) -> None:
        facts.remember(conn, Origin("beta", "cli", str(self.other)), statement)
        conn.commit()


@pytest.fixture
def project(tmp_path: Path, pg_data_dir: Path, conn: psycopg.Connection) -> Project:
    root, other, home = tmp_path / "acme-api", tmp_path / "secret-project", tmp_path / "home"
    for d in (root, other, home):
        d.mkdir()
    config = tmp_path / "lore.toml"
    config.write_text(
        f'default_space = "alpha"\n\n[[space]]\nid = "alpha"\npaths = ["{root}"]\n\n'
        f'[[space]]\nid = "beta"\npaths = ["{other}"]\n'
    )
    env = {k: os.environ[k] for k in _ENV_ALLOW if k in os.environ}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    env.update({"HOME": str(home), "LORE_DATA_DIR": str(pg_data_dir), "LORE_CONFIG": str(config)})
    env["LORE_HOOK_DEADLINE"] = "3"  # as lore_env: on 2 loaded cores a hook can wait a second for a core
    return Project(root, other, home, env)


def lore(project: Project, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real `lore` command (e.g. `install gemini`) in the project's environment; must succeed."""
    done = subprocess.run(
        [LORE, *args],
        cwd=cwd or project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, f"lore {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def run_agent(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run an agent CLI headless in its own process group; on timeout (or after it exits) the whole
    group (the CLI, its hooks, its MCP servers) is killed, so no process outlives the test."""
    proc = subprocess.Popen(
        list(args),
        cwd=cwd,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(
            f"{args[0]} did not finish within {timeout} s\n--- stdout ---\n{stdout[-3000:]}\n"
            f"--- stderr ---\n{stderr[-3000:]}"
        ) from None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(list(args), proc.returncode, stdout, stderr)


@pytest.fixture(scope="session")
def gemini_cli() -> Path:
    return npm.ensure(npm.GEMINI)


@pytest.fixture(scope="session")
def mcpb_cli() -> Path:
    return npm.ensure(npm.MCPB)


@pytest.fixture(scope="session")
def codex_cli() -> Path:
    return npm.ensure(npm.CODEX)


@pytest.fixture(scope="session")
def opencode_cli() -> Path:
    return npm.ensure(npm.OPENCODE)


@pytest.fixture(scope="session")
def opencode_plugin_package() -> Path:
    return npm.ensure(npm.OPENCODE_PLUGIN)


@pytest.fixture(scope="session")
def cline_cli() -> Path:
    return npm.ensure(npm.CLINE)


@pytest.fixture(scope="session")
def copilot_cli() -> Path:
    binary = npm.ensure(npm.COPILOT)
    npm.copilot_package(binary)
    return binary


@pytest.fixture(scope="session")
def claude_cli() -> Path:
    from e2e.claude import ensure_claude_cli

    return ensure_claude_cli()
