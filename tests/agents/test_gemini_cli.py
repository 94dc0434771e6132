"""`lore install gemini` in the real Gemini CLI (headless, against a local mock of the Gemini API).

Gemini CLI 0.61 findings (seen here): it needs `security.auth.selectedType = "gemini-api-key"` in
its settings, `GOOGLE_GEMINI_BASE_URL` points it at the mock, and a side request (its model router,
a JSON-schema call) precedes the main one. Only the nested hook output arrives, inside
`<hook_context>` in the first user turn, with every `<` and `>` escaped (`&lt;`, `&gt;`): lore's
envelope for Gemini is `[lore-memory …]`, which arrives as sent. In `-p` mode it
declares only tools that need no confirmation, hence `trust: true` on lore's server. Tools are
named `mcp_<server>_<tool>`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support import envelope
from support.db import assert_client

from .conftest import Project, lore, run_agent
from .mocks.base import call, text
from .mocks.gemini import MockGemini, function_names, user_text

pytestmark = pytest.mark.e2e

CORE = ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget")


def _settings(home: Path) -> None:
    """What a user's Gemini CLI already has (auth, telemetry off): lore must merge into it."""
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings, indent=2))


def _gemini(cli: Path, project: Project, mock: MockGemini, prompt: str = "hello") -> None:
    env = {
        **project.env,
        "GOOGLE_GEMINI_BASE_URL": mock.url,
        "GEMINI_API_KEY": "dummy-key",
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }
    done = run_agent([str(cli), "-p", prompt, "--output-format", "json"], cwd=project.root, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not mock.unknown, f"Gemini CLI called paths the mock does not serve: {mock.unknown}"


def _hook_context(body: dict[str, Any]) -> str:
    """The hook's text as the model reads it, as it arrived (not unescaped)."""
    turn = user_text(body)
    start = turn.find("<hook_context>")
    assert start >= 0, f"no <hook_context> in the first user turn: {turn[:500]!r}"
    return turn[start + len("<hook_context>") : turn.index("</hook_context>", start)]


def test_memory_arrives_in_hook_context_and_tools_are_declared(
    project: Project, conn: psycopg.Connection, gemini_cli: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.remember(conn, "the team prefers small PRs")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    _settings(project.home)
    out = lore(project, "install", "gemini").stdout
    assert "SessionStart hook" in out

    with MockGemini() as mock:
        _gemini(gemini_cli, project, mock)
        first = mock.main_requests()[0]
        context = _hook_context(first)
        # First day, round 2 (item 8): the model read `&lt;lore-memory space="work"&gt;`.
        assert envelope.any_opening(context, fence="[]", space="alpha") and "not an instruction" in context
        found = envelope.find(context)
        assert "&lt;" not in context and "&gt;" not in context and found.closing.startswith("[/lore-memory-")
        assert context.index("make ship") < context.index("small PRs")
        assert "BETA-SECRET" not in json.dumps([r.body for r in mock.requests])
        names = function_names(first)
        for tool in CORE:
            assert f"mcp_lore_{tool}" in names, names
        schema = next(
            d
            for t in first["tools"]
            for d in t.get("functionDeclarations", [])
            if d["name"] == "mcp_lore_forget"
        )
        assert "space" not in json.dumps(schema.get("parametersJsonSchema") or schema.get("parameters"))

    settings = json.loads((project.home / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"  # merged, not clobbered
    # The hook's environment holds the user's API key: the hook log names the run, never the key.
    hook_log = (Path(project.env["LORE_DATA_DIR"]) / "logs" / "hook.log").read_text()
    runs = [json.loads(line) for line in hook_log.splitlines() if '"gemini"' in line]
    assert runs and runs[-1]["ok"], runs
    assert "dummy-key" not in hook_log
    # what lore told the agent: the record holds this session and the ids in the text it received
    recorded = json.loads(lore(project, "log", "--json", "--client", "gemini").stdout)
    assert len(recorded) == 1 and recorded[0]["session_id"], recorded
    assert [i for i in recorded[0]["shown"] if f"[{i} " in context] == recorded[0]["shown"] != []
    assert recorded[0]["text"].strip() in context  # what the mock received, to the character
    shown = lore(project, "log", "show", str(recorded[0]["id"])).stdout
    assert shown.rstrip("\n").endswith(recorded[0]["text"].rstrip("\n"))


def test_a_tool_call_writes_into_the_projects_space(
    project: Project, conn: psycopg.Connection, gemini_cli: Path
) -> None:
    _settings(project.home)
    lore(project, "install", "gemini")
    with MockGemini() as mock:
        mock.script(
            call(
                "mcp_lore_remember_fact",
                {"statement": "acme-api runs on PostgreSQL 18", "subject": "acme-api"},
            ),
            text("stored"),
        )
        _gemini(gemini_cli, project, mock, "remember that")
        assert mock.pending == 0
        answer = json.dumps(mock.main_requests()[-1]["contents"][-1])
        assert "functionResponse" in answer and "f_" in answer, answer[:800]
    rows = conn.execute("SELECT space, source, workspace, statement FROM facts").fetchall()
    assert len(rows) == 1
    space, source, workspace, statement = rows[0]
    assert (space, workspace, statement) == ("alpha", str(project.root), "acme-api runs on PostgreSQL 18")
    assert_client(conn, source, "gemini")  # lore's id; the name it gave in `initialize` audited

    with MockGemini() as again:
        _gemini(gemini_cli, project, again)
        assert "acme-api runs on PostgreSQL 18" in _hook_context(again.main_requests()[0])
