"""lore as a Gemini CLI extension (gemini-extension/: the MCP server in gemini-extension.json, the
hooks in hooks/hooks.json), installed by the real Gemini CLI (`gemini extensions install`) and used
in one headless session against the mock Gemini API: the memory reaches the model's first request,
lore's tools are declared, a tool call writes into the project's space, and the AfterAgent hook
leaves the handoff.

Gemini CLI 0.61 (seen here): an extension cannot approve its own tools (it drops `trust` from an
extension's server and ignores an extension's ALLOW policy rules), and `gemini -p` declares only
approved tools, so the user allows lore's server once with a policy file of their own
(~/.gemini/policies/lore.toml, as docs/agents/gemini.md says); without it the memory still arrives
and no lore tool is declared. The extension runs `lore` from PATH, where pipx and uv put it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import psycopg
import pytest
from support import envelope
from support.db import assert_client

from .conftest import Project, run_agent
from .mocks.base import call, text
from .mocks.gemini import MockGemini, function_names
from .test_gemini_cli import _hook_context, _settings

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "gemini-extension"
VENV_BIN = str(Path(sys.executable).parent)
CORE = ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget")
POLICY = '[[rule]]\ntoolName = "*"\nmcpName = "lore"\ndecision = "allow"\npriority = 100\n'


def test_the_installed_extension_gives_memory_tools_and_handoff(
    project: Project, conn: psycopg.Connection, gemini_cli: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    _settings(project.home)
    env = {
        **project.env,
        "PATH": f"{VENV_BIN}:{project.env['PATH']}",  # `lore` on PATH, as after `pipx install git+URL`
        "GEMINI_API_KEY": "dummy-key",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    installed = run_agent(
        [str(gemini_cli), "extensions", "install", str(EXTENSION), "--consent"], cwd=project.root, env=env
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert 'Extension "lore" installed successfully' in installed.stdout + installed.stderr
    copied = project.home / ".gemini" / "extensions" / "lore"
    assert (copied / "gemini-extension.json").is_file() and (copied / "hooks" / "hooks.json").is_file()
    assert (
        not (project.home / ".gemini" / "settings.json").read_text().count("lore")
    )  # nothing of lore's there

    policies = project.home / ".gemini" / "policies"
    policies.mkdir(parents=True)
    (policies / "lore.toml").write_text(POLICY)
    with MockGemini() as mock:
        env["GOOGLE_GEMINI_BASE_URL"] = mock.url
        mock.script(
            call(
                "mcp_lore_remember_fact",
                {"statement": "acme-api runs on PostgreSQL 18", "subject": "acme-api"},
            ),
            text("stored"),
        )
        ran = run_agent(
            [str(gemini_cli), "-p", "remember that", "--output-format", "json"], cwd=project.root, env=env
        )
        assert ran.returncode == 0, ran.stderr[-3000:]
        assert not mock.unknown and mock.pending == 0
        first = mock.main_requests()[0]
        context = _hook_context(first)
        assert envelope.opens(context, "alpha", fence="[]") and "make ship" in context
        assert "BETA-SECRET" not in json.dumps([r.body for r in mock.requests])
        names = function_names(first)
        assert all(f"mcp_lore_{tool}" in names for tool in CORE), names
        # the model is sent the input schema only (tests/tools/test_mcp_stdio.py counts that)
        declared = json.dumps([d for t in first["tools"] for d in t.get("functionDeclarations", [])])
        assert "unread_left" not in declared and "readOnlyHint" not in declared

    rows = conn.execute("SELECT space, source, workspace, statement FROM facts ORDER BY lineage").fetchall()
    assert [(r[0], r[2], r[3]) for r in rows[-1:]] == [
        ("alpha", str(project.root), "acme-api runs on PostgreSQL 18")
    ]
    assert_client(conn, rows[-1][1], "gemini")
    # the handoff: one row for the session, written by AfterAgent (the final text) and SessionEnd
    handoffs = conn.execute("SELECT space, client, message, events FROM handoffs").fetchall()
    assert len(handoffs) == 1 and handoffs[0][:2] == ("alpha", "gemini"), handoffs
    assert "stored" in (handoffs[0][2] or "") and handoffs[0][3] >= 1, handoffs
