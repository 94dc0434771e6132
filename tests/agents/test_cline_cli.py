"""`lore install cline` in the real Cline CLI (`cline --json PROMPT`, against a local mock of an
OpenAI-compatible Chat Completions API).

Cline CLI 3.0.65 findings (seen here): `cline auth --provider openai --baseurl URL` stores an
`openai-compatible` provider in `~/.cline/data/settings/providers.json`, which drives it headless. It
reads MCP servers from `~/.cline/data/settings/cline_mcp_settings.json` only (not the VS Code
extension's file), starts them in its working directory (the project) without roots, and names the
tools `<server>__<tool>`. It runs the `TaskStart` script from `~/Documents/Cline/Hooks/` with
`workspaceRoots` in its input, but detached and with its output ignored: no memory reaches the
model before the first prompt. In its default ("auto") session backend it starts a hub daemon
that outlives the run; `CLINE_SESSION_BACKEND_MODE=local` keeps everything inside the run.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import psycopg
import pytest
from support.db import assert_client

from lore.core import hooklog as log

from .conftest import LORE, Project, lore, run_agent
from .mocks.base import call, text
from .mocks.chat import MockChat, all_text, tool_names

pytestmark = pytest.mark.e2e

CORE = ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget")
QUIET = {
    "CLINE_SESSION_BACKEND_MODE": "local",  # no hub daemon outliving the run
    "CLINE_NO_AUTO_UPDATE": "1",
    "npm_config_registry": "http://127.0.0.1:9/",  # nothing may be fetched
}


def _env(project: Project) -> dict[str, str]:
    return {**project.env, **QUIET}


def _user_config(cli: Path, project: Project, mock: MockChat) -> Path:
    """The user's own provider, set up as Cline's README says: lore must leave it alone."""
    args = ["auth", "--provider", "openai", "--apikey", "dummy", "--modelid", "mock-model"]
    done = run_agent([str(cli), *args, "--baseurl", f"{mock.url}/v1"], cwd=project.root, env=_env(project))
    assert done.returncode == 0, done.stdout + done.stderr
    providers = project.home / ".cline" / "data" / "settings" / "providers.json"
    assert json.loads(providers.read_text())["lastUsedProvider"] == "openai-compatible"
    return providers


def _cline(cli: Path, project: Project, prompt: str = "say hello") -> list[dict[str, object]]:
    done = run_agent([str(cli), "--json", prompt], cwd=project.root, env=_env(project))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert events and events[-1].get("type") == "run_result", done.stdout[-3000:]
    return events


def _hook_runs(project: Project) -> list[log.Entry]:
    """Cline's session-start hook runs in the hook log (which the tests of one worker share)."""
    return [e for e in log.entries(project.env) if e.client == "cline" and e.event == "session-start"]


def _new_hook_runs(project: Project, before: int, wait: float = 20) -> list[log.Entry]:
    """The runs after the first `before`, waiting (bounded) for a detached hook to finish."""
    deadline = time.monotonic() + wait
    while len(_hook_runs(project)) <= before and time.monotonic() < deadline:
        time.sleep(0.1)
    return _hook_runs(project)[before:]


def _doctor(project: Project) -> str:
    done = subprocess.run(
        [LORE, "doctor"], cwd=project.root, env=project.env, capture_output=True, text=True, timeout=60
    )
    return done.stdout


def test_tools_are_declared_and_the_taskstart_output_is_ignored(
    project: Project, conn: psycopg.Connection, cline_cli: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    with MockChat() as mock:
        providers = _user_config(cline_cli, project, mock)
        provider_settings = json.loads(providers.read_text())["providers"]
        out = lore(project, "install", "cline").stdout
        cli_settings = project.home / ".cline" / "data" / "settings" / "cline_mcp_settings.json"
        assert str(cli_settings) in out and "ignores what it prints" in out  # the limit is said
        before = len(_hook_runs(project))
        _cline(cline_cli, project)
        first = mock.main_requests()[0]
        for tool in CORE:
            assert f"lore__{tool}" in tool_names(first), tool_names(first)
        # The hook ran for this project and lore answered with its memory; the CLI dropped it.
        runs = _new_hook_runs(project, before)
        assert (
            len(runs) == 1
            and runs[-1].ok
            and "space alpha" in runs[-1].detail
            and "1 fact shown" in runs[-1].detail
        )
        sent = json.dumps(mock.chat_requests())
        assert "<lore-memory" not in sent and "make ship" not in sent
        assert "BETA-SECRET" not in sent
        assert not mock.unknown, mock.unknown
    assert json.loads(providers.read_text())["providers"].keys() == provider_settings.keys()
    mine = json.loads(providers.read_text())["providers"]["openai-compatible"]["settings"]
    assert mine == provider_settings["openai-compatible"]["settings"]  # Cline touches only updatedAt
    doctor = _doctor(project)
    assert f"OK   cline (user) Cline CLI MCP server in {cli_settings} → {LORE}" in doctor, doctor


def test_a_tool_call_writes_into_the_projects_space(
    project: Project, conn: psycopg.Connection, cline_cli: Path
) -> None:
    with MockChat() as mock:
        _user_config(cline_cli, project, mock)
        lore(project, "install", "cline")
        mock.script(
            call(
                "lore__remember_fact", {"statement": "acme-api runs on PostgreSQL 18", "subject": "acme-api"}
            ),
            text("stored"),
        )
        _cline(cline_cli, project, "remember that")
        assert mock.pending == 0
        answer = mock.main_requests()[-1]
        assert "f_" in all_text(answer), json.dumps(answer["messages"][-2:])[:800]
    rows = conn.execute("SELECT space, source, workspace, statement FROM facts").fetchall()
    assert len(rows) == 1
    space, source, workspace, statement = rows[0]
    assert (space, workspace, statement) == ("alpha", str(project.root), "acme-api runs on PostgreSQL 18")
    assert_client(conn, source, "cline")  # lore's id; the name it gave in `initialize` audited


def test_uninstall_takes_the_tools_and_the_hook_away(
    project: Project, conn: psycopg.Connection, cline_cli: Path
) -> None:
    with MockChat() as mock:
        _user_config(cline_cli, project, mock)
        lore(project, "install", "cline")
        before = len(_hook_runs(project))
        _cline(cline_cli, project)
        assert "lore__recall_facts" in tool_names(mock.main_requests()[-1])
        assert len(_new_hook_runs(project, before)) == 1
        lore(project, "uninstall", "cline")
        _cline(cline_cli, project)
        assert not [n for n in tool_names(mock.main_requests()[-1]) if n.startswith("lore")]
        assert _new_hook_runs(project, before + 1, wait=2) == []  # no hook left to run
