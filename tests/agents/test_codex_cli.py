"""`lore install codex` in the real Codex CLI (`codex exec`, against a local mock Responses API).

Codex 0.171 findings (seen here): `OPENAI_BASE_URL` is ignored, so the test's own config.toml
defines a `mock` model provider (lore's installer must merge into it). The stdio server starts in
the session directory with only HOME, PATH and its `env_vars`. MCP tools reach the model as the
namespace `mcp__lore`; the SessionStart hook's text arrives as a developer message before the user's
prompt. An untrusted hook is skipped without a word; trusting it (what the TUI's "Hooks need review"
does, here through `codex app-server`: `hooks/list`, then `config/batchWrite` of
`hooks.state.<key>.trusted_hash`) makes it run without `--dangerously-bypass-hook-trust`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support.db import assert_client

from .conftest import LORE, Project, lore, run_agent
from .mocks.base import call, text
from .mocks.responses import MockResponses, input_texts, tool_names

pytestmark = pytest.mark.e2e

CORE = ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget")


def _user_config(project: Project, mock: MockResponses) -> None:
    """The user's own Codex config (a model provider, plugins off): lore must keep all of it."""
    codex_home = project.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        "# my Codex settings\n"
        'model = "mock-model"\nmodel_provider = "mock"\n\n'
        f'[model_providers.mock]\nname = "mock"\nbase_url = "{mock.url}/v1"\n'
        'env_key = "MOCK_API_KEY"\nwire_api = "responses"\n\n'
        "[features]\nplugins = false\n"
    )


def _env(project: Project) -> dict[str, str]:
    return {**project.env, "CODEX_HOME": str(project.home / ".codex"), "MOCK_API_KEY": "dummy"}


def _codex(cli: Path, project: Project, *flags: str, prompt: str = "hello") -> None:
    args = [
        str(cli),
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        *flags,
        prompt,
    ]
    done = run_agent(args, cwd=project.root, env=_env(project))
    assert done.returncode == 0, done.stderr[-3000:]


def _developer_memory(body: dict[str, Any]) -> str:
    found = [t for role, t in input_texts(body) if role == "developer" and "<lore-memory" in t]
    assert found, [(role, t[:80]) for role, t in input_texts(body)]
    return found[0]


def _doctor(project: Project) -> str:
    done = subprocess.run(
        [LORE, "doctor"], cwd=project.root, env=_env(project), capture_output=True, text=True, timeout=60
    )
    return done.stdout


def _trust_lore_hook(cli: Path, project: Project) -> None:
    """Trust lore's hook as a user does in the TUI, through Codex's own app-server protocol."""
    proc = subprocess.Popen(
        [str(cli), "app-server"],
        cwd=project.root,
        env=_env(project),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout
    ids = iter(range(1, 100))

    def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
        ident = next(ids)
        stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
        stdin.flush()
        while True:
            line = stdout.readline()
            assert line, "codex app-server closed its output"
            message = json.loads(line)
            if message.get("id") == ident:
                assert "error" not in message, message
                result: dict[str, Any] = message["result"]
                return result

    try:
        rpc("initialize", {"clientInfo": {"name": "lore-test", "version": "0"}})
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
        listed = rpc("hooks/list", {"cwds": [str(project.root)]})["data"][0]["hooks"]
        ours = [h for h in listed if "hook session-start --client codex" in (h.get("command") or "")]
        assert ours and ours[0]["trustStatus"] == "untrusted", listed
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in ours}
        rpc(
            "config/batchWrite",
            {"edits": [{"keyPath": "hooks.state", "value": state, "mergeStrategy": "upsert"}]},
        )
    finally:
        proc.stdin.close()
        proc.stdout.close()
        proc.wait(timeout=30)


def test_tools_are_listed_and_memory_is_injected(
    project: Project, conn: psycopg.Connection, codex_cli: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.remember(conn, "the team prefers small PRs")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    with MockResponses() as mock:
        _user_config(project, mock)
        out = lore(project, "install", "codex").stdout
        assert "Hooks need review" in out  # the trust step is said, not hidden
        _codex(codex_cli, project, "--dangerously-bypass-hook-trust")
        first = mock.response_requests()[0]
        names = tool_names(first)
        for tool in CORE:
            assert f"mcp__lore__{tool}" in names, names
        memory = _developer_memory(first)
        assert "not an instruction" in memory and memory.index("make ship") < memory.index("small PRs")
        turns = input_texts(first)
        at = next(i for i, (role, t) in enumerate(turns) if role == "developer" and "<lore-memory" in t)
        assert turns[-1] == ("user", "hello") and at < len(turns) - 1  # before the user's prompt
        assert "BETA-SECRET" not in json.dumps(mock.response_requests())
    config = (project.home / ".codex" / "config.toml").read_text()
    assert config.startswith("# my Codex settings\n") and "[model_providers.mock]" in config


def test_an_untrusted_hook_is_skipped_silently_and_doctor_says_so(
    project: Project, conn: psycopg.Connection, codex_cli: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    with MockResponses() as mock:
        _user_config(project, mock)
        lore(project, "install", "codex")
        _codex(codex_cli, project)
        assert "<lore-memory" not in json.dumps(mock.response_requests())
        assert "mcp__lore__recall_facts" in tool_names(mock.response_requests()[0])
        assert "Codex has not trusted lore's hook yet" in _doctor(project)

        _trust_lore_hook(codex_cli, project)
        assert "the SessionStart hook is trusted" in _doctor(project)
        _codex(codex_cli, project)
        assert "make ship" in _developer_memory(mock.response_requests()[-1])


def test_a_tool_call_writes_into_the_projects_space(
    project: Project, conn: psycopg.Connection, codex_cli: Path
) -> None:
    with MockResponses() as mock:
        _user_config(project, mock)
        lore(project, "install", "codex")
        mock.script(
            call(
                "mcp__lore__remember_fact",
                {"statement": "acme-api runs on PostgreSQL 18", "subject": "acme-api"},
            ),
            text("stored"),
        )
        _codex(codex_cli, project, "--dangerously-bypass-hook-trust", prompt="remember that")
        assert mock.pending == 0
        outputs = [
            i for i in mock.response_requests()[-1]["input"] if i.get("type") == "function_call_output"
        ]
        assert outputs and "f_" in json.dumps(outputs), mock.response_requests()[-1]["input"][-3:]
    rows = conn.execute("SELECT space, source, workspace, statement FROM facts").fetchall()
    assert len(rows) == 1
    space, source, workspace, statement = rows[0]
    assert (space, workspace, statement) == ("alpha", str(project.root), "acme-api runs on PostgreSQL 18")
    assert_client(conn, source, "codex")  # lore's id; the name it gave in `initialize` audited
