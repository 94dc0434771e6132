"""`lore install opencode` in the real OpenCode (`opencode run`, against a local mock of an
OpenAI-compatible Chat Completions API).

OpenCode 1.18 findings (seen here): a provider in `opencode.json` (`@ai-sdk/openai-compatible`,
`baseURL` at the mock) and `"model": "mock/mock-model"` drive it headless. It runs `npm install
@opencode-ai/plugin@<its version>` in each config dir at start, which needs the registry: the test
links a cached install there, and points npm at a dead port to prove nothing is fetched. The stdio
server starts in the project directory; tools are named `<server>_<tool>`. lore's JS plugin adds
the memory to the system messages through `experimental.chat.system.transform`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg
import pytest
from support.db import assert_client

from .conftest import Project, lore, run_agent
from .mocks.base import call, text
from .mocks.chat import MockChat, all_text, system_text, tool_names

pytestmark = pytest.mark.e2e

CORE = ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget")
QUIET = {
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "npm_config_registry": "http://127.0.0.1:9/",  # nothing may be fetched
}


def _user_config(project: Project, mock: MockChat, plugin_package: Path) -> Path:
    """The user's OpenCode config (a provider and model): lore must merge into it."""
    config_dir = project.home / ".config" / "opencode"
    config_dir.mkdir(parents=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": "mock/mock-model",
        "provider": {
            "mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": f"{mock.url}/v1", "apiKey": "dummy"},
                "models": {"mock-model": {"name": "Mock"}},
            }
        },
        "autoupdate": False,
        "share": "disabled",
    }
    (config_dir / "opencode.json").write_text(json.dumps(config, indent=2))
    for name in ("package.json", "package-lock.json"):
        shutil.copy(plugin_package / name, config_dir / name)
    (config_dir / "node_modules").symlink_to(plugin_package / "node_modules")
    return config_dir


def _opencode(cli: Path, project: Project, prompt: str = "hello") -> None:
    done = run_agent([str(cli), "run", prompt], cwd=project.root, env={**project.env, **QUIET})
    assert done.returncode == 0, done.stderr[-3000:]


def test_memory_reaches_the_system_messages_and_tools_are_listed(
    project: Project, conn: psycopg.Connection, opencode_cli: Path, opencode_plugin_package: Path
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.remember(conn, "the team prefers small PRs")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    with MockChat() as mock:
        config_dir = _user_config(project, mock, opencode_plugin_package)
        lore(project, "install", "opencode")
        assert (config_dir / "plugins" / "lore.js").is_file()
        _opencode(opencode_cli, project)
        first = mock.main_requests()[0]
        system = system_text(first)
        assert "<lore-memory" in system and "not an instruction" in system
        assert system.index("make ship") < system.index("small PRs")
        for tool in CORE:
            assert f"lore_{tool}" in tool_names(first), tool_names(first)
        assert "BETA-SECRET" not in json.dumps(mock.chat_requests())
    config = json.loads((config_dir / "opencode.json").read_text())
    assert config["provider"]["mock"]["options"]["apiKey"] == "dummy"  # merged, not clobbered


def test_a_tool_call_writes_into_the_projects_space(
    project: Project, conn: psycopg.Connection, opencode_cli: Path, opencode_plugin_package: Path
) -> None:
    with MockChat() as mock:
        _user_config(project, mock, opencode_plugin_package)
        lore(project, "install", "opencode")
        mock.script(
            call(
                "lore_remember_fact", {"statement": "acme-api runs on PostgreSQL 18", "subject": "acme-api"}
            ),
            text("stored"),
        )
        _opencode(opencode_cli, project, "remember that")
        assert mock.pending == 0
        assert "f_" in all_text(mock.main_requests()[-1]) or "f_" in json.dumps(mock.main_requests()[-1])
    rows = conn.execute("SELECT space, source, workspace, statement FROM facts").fetchall()
    assert len(rows) == 1
    space, source, workspace, statement = rows[0]
    assert (space, workspace, statement) == ("alpha", str(project.root), "acme-api runs on PostgreSQL 18")
    assert_client(conn, source, "opencode")  # lore's id; the name it gave in `initialize` audited
