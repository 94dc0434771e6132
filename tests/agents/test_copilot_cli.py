"""`lore install copilot` in the real GitHub Copilot CLI (`copilot -p`, against a local mock of an
OpenAI-compatible Chat Completions API).

Copilot CLI 1.0.102 findings (seen here): `COPILOT_PROVIDER_BASE_URL` (BYOK) with `COPILOT_MODEL`
drives it with no GitHub sign-in, and `COPILOT_OFFLINE=true` keeps it off the network. It reads MCP
servers from `~/.copilot/mcp-config.json`, and the project's `.github/mcp.json` only in a trusted
folder (`--trust-folder`, or `trustedFolders` in `~/.copilot/config.json`); it starts them in its
working directory with the user's environment and names the tools `<server>-<tool>`.

Its sessionStart hooks (`~/.copilot/hooks/*.json`, `hooks` in `~/.copilot/settings.json`; the
project's `.github/hooks/*.json` when trusted) get `{"sessionId", "timestamp", "cwd", "source":
"new", "initialPrompt"}` on stdin, and a flat `{"additionalContext": ...}` on stdout IS read: it
arrives whole as a user message before the prompt. The nested (Claude-style) answer and plain text
are ignored (`test_session_start_hook_contract`). `lore install copilot` writes that hook
(`~/.copilot/hooks/lore.json`), and lore answers in the flat shape.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support import envelope
from support.db import assert_client

from lore.core import clients, measure

from . import npm
from .conftest import LORE, Project, lore, run_agent
from .mocks.base import call, text
from .mocks.chat import MockChat, all_text, tool_names

pytestmark = pytest.mark.e2e

CORE = ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget")


def _env(cli: Path, project: Project, mock: MockChat) -> dict[str, str]:
    """BYOK at the mock, offline; a fresh XDG cache with the package Copilot unpacked once."""
    cache = project.home / ".cache"
    if not (cache / "copilot" / "pkg").exists():
        (cache / "copilot").mkdir(parents=True)
        (cache / "copilot" / "pkg").symlink_to(npm.copilot_package(cli))
    return {
        **project.env,
        "XDG_CACHE_HOME": str(cache),
        "COPILOT_OFFLINE": "true",
        "COPILOT_AUTO_UPDATE": "false",
        "COPILOT_PROVIDER_BASE_URL": f"{mock.url}/v1",
        "COPILOT_PROVIDER_API_KEY": "dummy",
        "COPILOT_MODEL": "mock-model",
    }


def _copilot(
    cli: Path, project: Project, mock: MockChat, *flags: str, prompt: str = "hello"
) -> subprocess.CompletedProcess[str]:
    args = [str(cli), "-p", prompt, "--allow-all-tools", "--no-auto-update", "-s", *flags]
    done = run_agent(args, cwd=project.root, env=_env(cli, project, mock))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert not mock.unknown, f"Copilot CLI called paths the mock does not serve: {mock.unknown}"
    return done


def _lore_tools(body: dict[str, Any]) -> list[str]:
    return [name for name in tool_names(body) if name.startswith("lore")]


def _doctor(project: Project) -> str:
    done = subprocess.run(
        [LORE, "doctor"], cwd=project.root, env=project.env, capture_output=True, text=True, timeout=60
    )
    return done.stdout


def test_tools_are_declared_and_the_server_runs_in_the_project(
    project: Project, conn: psycopg.Connection, copilot_cli: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    with MockChat() as mock:
        out = lore(project, "install", "copilot").stdout
        assert str(project.home / ".copilot" / "hooks" / "lore.json") in out
        _copilot(copilot_cli, project, mock)
        first = mock.main_requests()[0]
        for tool in CORE:
            assert f"lore-{tool}" in tool_names(first), tool_names(first)
        assert "BETA-SECRET" not in json.dumps(mock.chat_requests())
        mock.script(call("lore-recall_facts", {}), text("done"))
        _copilot(copilot_cli, project, mock, prompt="what do you know?")
        answer = all_text(mock.main_requests()[-1])
        assert "make ship" in answer and "BETA-SECRET" not in answer, answer[-1500:]
    config = project.home / ".copilot" / "mcp-config.json"
    assert f"OK   copilot (user) MCP server in {config} → {LORE}" in _doctor(project)


def _users(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_memory_arrives_whole_before_the_first_prompt(
    project: Project, conn: psycopg.Connection, copilot_cli: Path
) -> None:
    """The sessionStart hook lore installs: the project's space's memory is the first user message
    of the first request, at the largest budget lore allows (9,500), uncut; another space's is not."""
    config = Path(project.env["LORE_CONFIG"])
    config.write_text(config.read_text() + "\n[session_start]\nmax_chars = 9500\n")
    for n in range(30):  # ~12,000 characters of facts: more than the budget
        project.remember(conn, f"acme-api runbook step {n:02d}: " + "check the deploy dashboards " * 13)
    project.remember(conn, "ALPHA-MARK acme-api deploys with make ship", subject="acme-api")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    lore(project, "install", "copilot")
    with MockChat() as mock:
        _copilot(copilot_cli, project, mock)
        first = mock.chat_requests()[0]
    assert mock.is_main(first)  # the first request the model gets is the session's own
    users = _users(first)
    assert users[0].startswith("<lore-memory") and "ALPHA-MARK" in users[0], users[0][:300]
    assert users[-1].endswith("hello") and "ALPHA-MARK" not in users[-1]  # before the prompt, apart
    assert "BETA-SECRET" not in json.dumps(first)
    # All of it: exactly what lore's hook prints for this session, cut by lore's budget only.
    payload = json.dumps(
        {"sessionId": "s", "cwd": str(project.root), "source": "new", "initialPrompt": "hello"}
    )
    printed = subprocess.run(
        [LORE, "hook", "session-start", "--client", "copilot"],
        input=payload,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    assert envelope.unnonced(users[0]) == envelope.unnonced(json.loads(printed)["additionalContext"])
    assert 9_000 < measure.size(users[0]) <= 9_500 and "more facts in lore" in users[0]
    assert "OK   copilot: hook last ran" in _doctor(project)


def test_a_tool_call_writes_into_the_projects_space(
    project: Project, conn: psycopg.Connection, copilot_cli: Path
) -> None:
    with MockChat() as mock:
        lore(project, "install", "copilot")
        mock.script(
            call(
                "lore-remember_fact", {"statement": "acme-api runs on PostgreSQL 18", "subject": "acme-api"}
            ),
            text("stored"),
        )
        _copilot(copilot_cli, project, mock, prompt="remember that")
        assert mock.pending == 0
        assert "f_" in all_text(mock.main_requests()[-1])
    rows = conn.execute("SELECT space, source, workspace, statement FROM facts").fetchall()
    assert len(rows) == 1
    space, source, workspace, statement = rows[0]
    assert (space, workspace, statement) == ("alpha", str(project.root), "acme-api runs on PostgreSQL 18")
    assert_client(conn, source, "copilot")  # lore's id; the name it gave in `initialize` audited


def test_the_project_file_needs_a_trusted_folder_and_uninstall_removes_it(
    project: Project, conn: psycopg.Connection, copilot_cli: Path
) -> None:
    (project.root / ".git").mkdir()
    project.remember(conn, "ALPHA-MARK acme-api deploys with make ship", subject="acme-api")
    with MockChat() as mock:
        out = lore(project, "install", "copilot", "--project").stdout
        assert str(project.root / ".github" / "mcp.json") in out and "trusted folder" in out
        assert str(project.root / ".github" / "hooks" / "lore.json") in out
        _copilot(copilot_cli, project, mock)
        untrusted = mock.main_requests()[-1]
        assert _lore_tools(untrusted) == []  # untrusted: .github/mcp.json is not read
        assert "ALPHA-MARK" not in json.dumps(untrusted)  # nor .github/hooks/
        assert "not a trusted folder" in _doctor(project)

        _copilot(copilot_cli, project, mock, "--trust-folder")
        assert "lore-recall_facts" in _lore_tools(mock.main_requests()[-1])
        assert "ALPHA-MARK" in _users(mock.main_requests()[-1])[0]
        # What "Yes, and remember this folder" records (seen in the TUI), header comments included.
        config = project.home / ".copilot" / "config.json"
        header = "// User settings belong in settings.json.\n// This file is managed automatically.\n"
        config.write_text(header + json.dumps({"trustedFolders": [str(project.root)]}, indent=2))
        assert "not a trusted folder" not in _doctor(project)
        _copilot(copilot_cli, project, mock)
        assert "lore-recall_facts" in _lore_tools(mock.main_requests()[-1])

        lore(project, "uninstall", "copilot", "--project")
        assert not (project.root / ".github" / "hooks" / "lore.json").exists()
        _copilot(copilot_cli, project, mock, "--trust-folder")
        assert _lore_tools(mock.main_requests()[-1]) == []
        assert "ALPHA-MARK" not in json.dumps(mock.main_requests()[-1])


def _hook(project: Project, name: str, answer: str) -> dict[str, Any]:
    """A sessionStart hook that records its input and prints `answer`."""
    script = project.home / f"hook-{name}.sh"
    script.write_text(
        f"#!/bin/sh\ncat > {project.home}/input-{name}.json\nprintf '%s\\n' {shlex.quote(answer)}\n"
    )
    script.chmod(0o755)
    return {"type": "command", "bash": str(script), "timeoutSec": 30}


def test_session_start_hook_contract(project: Project, copilot_cli: Path) -> None:
    """What Copilot CLI reads from a sessionStart hook (the documentation says: nothing)."""
    nested = {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "NESTED-MARK"}}
    hooks = [
        _hook(project, "flat", json.dumps({"additionalContext": "FLAT-MARK"})),
        _hook(project, "nested", json.dumps(nested)),
        _hook(project, "plain", "PLAIN-MARK"),
    ]
    (project.home / ".copilot" / "hooks").mkdir(parents=True)
    (project.home / ".copilot" / "hooks" / "contract.json").write_text(
        json.dumps({"version": 1, "hooks": {"sessionStart": hooks}})
    )
    with MockChat() as mock:
        _copilot(copilot_cli, project, mock)
        messages = mock.main_requests()[0]["messages"]
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[0] == "FLAT-MARK" and users[-1].endswith("hello"), users  # before the prompt
    assert "NESTED-MARK" not in json.dumps(messages) and "PLAIN-MARK" not in json.dumps(messages)
    for name in ("flat", "nested", "plain"):
        payload = (project.home / f"input-{name}.json").read_text()
        data = json.loads(payload)
        assert data["source"] == "new" and data["initialPrompt"] == "hello", data
        parsed = clients.parse_input(payload)
        assert parsed.cwd == str(project.root) and parsed.source in clients.INJECT_ON
