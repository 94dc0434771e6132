"""lore's plugin in the real Claude Code CLI (headless, against the mock Messages API).

Proves what fails silently: the memory reaches the model's request in the shape Claude Code reads,
only the memory this workspace may read, within budget, never breaking a session; and the tools
are offered and write into the right space with the client's name as source.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from support import envelope

from lore.core import measure, render
from lore.core.session import Origin
from lore.db import embedded
from lore.store import facts

from .claude import result_json, run_claude
from .mock_anthropic import JSON, MockAnthropic, requests_text, text_reply, tool_names, tool_use_reply

pytestmark = pytest.mark.e2e

PLUGIN = Path(__file__).resolve().parents[2] / "plugin"
VENV_BIN = str(Path(sys.executable).parent)
LORE = str(Path(sys.executable).parent / "lore")
TOOL = "mcp__plugin_lore_lore__{}"
MORE = "more facts in lore; call recall_facts to see them"


@pytest.fixture
def project(tmp_path: Path, pg_data_dir: Path, conn: psycopg.Connection) -> tuple[Path, dict[str, str]]:
    """A project dir in space `alpha`; `beta` is another space this workspace may not read."""
    work = tmp_path / "acme-api"
    other = tmp_path / "secret-project"
    work.mkdir()
    other.mkdir()
    config = tmp_path / "lore.toml"
    config.write_text(
        f'[[space]]\nid = "alpha"\npaths = ["{work}"]\n\n[[space]]\nid = "beta"\npaths = ["{other}"]\n'
    )
    env = {
        "PATH": f"{VENV_BIN}:/usr/bin:/bin",
        "LORE_DATA_DIR": str(pg_data_dir),
        "LORE_CONFIG": str(config),
        "LORE_HOOK_DEADLINE": "3",  # as lore_env: on 2 loaded cores a hook can wait a second for a core
    }
    return work, env


def _claude(
    mock: MockAnthropic, home: Path, cwd: Path, env: dict[str, str], cli: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    cp = run_claude(
        "hello",
        cwd=cwd,
        home=home,
        mock_url=mock.url,
        plugin_dir=PLUGIN,
        env_extra=env,
        extra_args=extra,
        claude=cli,
    )
    assert cp.returncode == 0, cp.stderr[-2000:]
    assert not result_json(cp).get("is_error"), cp.stdout[-2000:]
    return cp


def _injected(request: JSON) -> str:
    """The lore memory block as it reached the model (from the fence to its last line)."""
    text = requests_text({"messages": request["messages"]})
    start = text.find("<lore-memory")
    assert start >= 0, "no lore memory in the request"
    end = start + len(envelope.find(text[start:]).text)
    rest = text[end:].split("\n", 2)
    if len(rest) > 1 and rest[1].endswith(MORE):
        end += 1 + len(rest[1])
    return text[start:end]


def test_memory_reaches_the_model_and_only_this_workspaces(
    project: tuple[Path, dict[str, str]],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
) -> None:
    work, env = project
    facts.remember(
        conn, Origin("alpha", "cli", str(work)), "acme-api deploys with make ship", subject="acme-api"
    )
    facts.remember(conn, Origin("alpha", "cli", str(work)), "the team prefers small PRs")
    facts.remember(conn, Origin("beta", "cli", "/elsewhere"), "BETA-SECRET launch code is 0000")

    _claude(mock_api, claude_home, work, env, claude_cli)

    first = mock_api.main_messages()[0]
    block = _injected(first)
    # (a) the workspace's facts, workspace subject first, fenced as reference data
    assert "acme-api deploys with make ship" in block and "the team prefers small PRs" in block
    assert block.index("make ship") < block.index("small PRs")
    assert "not an instruction" in block
    # nested shape: it arrives in the messages, not as a dropped flat field
    assert "<lore-memory" not in requests_text({"system": first.get("system", [])})
    # (b) another space's facts never
    assert "BETA-SECRET" not in json.dumps(mock_api.messages())
    # (c) lore's tools are offered
    names = tool_names(first)
    for tool in ("remember_fact", "remember_note", "recall_facts", "search_notes", "revise_fact", "forget"):
        assert TOOL.format(tool) in names
    # ... with their input schemas only: a tool's outputSchema and annotations stay with Claude Code
    # (the tools/list budget counts what the model is sent: tests/tools/test_mcp_stdio.py)
    lore_tools = json.dumps([t for t in first["tools"] if "lore" in t["name"]])
    assert "unread_left" not in lore_tools and "Hint" not in lore_tools and "input_schema" in lore_tools
    # (d) the record of it: `lore log` holds this session with the ids the model received, and
    # `lore log show` prints the text the mock recorded
    log = subprocess.run(
        [LORE, "log", "--json"], env=env, cwd=work, capture_output=True, text=True, check=True
    )
    recorded = json.loads(log.stdout)
    assert len(recorded) == 1 and recorded[0]["client"] == "claude-code" and recorded[0]["session_id"]
    assert (
        recorded[0]["text"] == block
        and recorded[0]["shown"]
        and all(f"[{i} " in block for i in recorded[0]["shown"])
    )
    shown = subprocess.run(
        [LORE, "log", "show", str(recorded[0]["id"])],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.rstrip("\n").endswith(block)


def test_database_down_session_completes_and_log_says_why(
    project: tuple[Path, dict[str, str]],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
    pg_data_dir: Path,
) -> None:
    work, env = project
    facts.remember(conn, Origin("alpha", "cli", str(work)), "should not be injected")
    down = {**env, "LORE_DATABASE_URL": f"postgresql://postgres@/lore?host={work}/no-such-socket-dir"}
    log_file = pg_data_dir / "logs" / "hook.log"
    before = log_file.read_text().count("\n") if log_file.exists() else 0

    _claude(mock_api, claude_home, work, down, claude_cli)

    assert "<lore-memory" not in json.dumps(mock_api.messages())
    # the agent is told, in one line, that the memory is unavailable this session and why
    assert "the shared memory is unavailable in this session" in json.dumps(mock_api.messages())
    new_lines = [json.loads(x) for x in log_file.read_text().splitlines()[before:]]
    failures = [x for x in new_lines if not x["ok"] and x["client"] == "claude-code"]
    assert failures, new_lines
    assert "no-such-socket-dir" in failures[-1]["detail"] or "connect" in failures[-1]["detail"].lower()


def test_after_a_reboot_the_first_session_still_gets_the_memory(
    project: tuple[Path, dict[str, str]],
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
    tmp_path: Path,
) -> None:
    """First day, round 2 (item 3): with the embedded database stopped (a reboot), the first session
    got no memory ("memory arrives from the next session"), and nothing told the user. The hook now
    starts the server within its deadline and delivers the memory in that same session."""
    work, env = project
    # (as root, a data dir under pytest's closed tmp dirs puts its cluster under the root base)
    private = {**env, "LORE_DATA_DIR": str(tmp_path / "data"), "LORE_ROOT_BASE": os.environ["LORE_ROOT_BASE"]}
    del private["LORE_HOOK_DEADLINE"]  # the product's own deadline (0.9 s): the start must fit in it
    subprocess.run(
        [LORE, "facts", "add", "acme-api deploys with make ship", "--workspace", str(work)],
        env=private,
        check=True,
        capture_output=True,
    )
    # a reboot: the server gone, and no `lore db stop` marker (which keeps it stopped on purpose)
    assert embedded.stop(private) and not embedded.held(private)
    try:
        status = subprocess.run([LORE, "db", "status"], env=private, capture_output=True, text=True)
        assert status.stdout.startswith("stopped"), status.stdout
        _claude(mock_api, claude_home, work, private, claude_cli)
        assert "acme-api deploys with make ship" in _injected(mock_api.main_messages()[0])
    finally:
        subprocess.run([LORE, "db", "stop"], env=private, capture_output=True)


def test_500_long_facts_stay_in_budget_and_end_with_more_line(
    project: tuple[Path, dict[str, str]],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
) -> None:
    work, env = project
    origin = Origin("alpha", "cli", str(work))
    for i in range(500):
        facts.remember(conn, origin, f"long fact {i:03d} " + "lorem ipsum dolor sit amet " * 30)
    conn.commit()

    _claude(mock_api, claude_home, work, env, claude_cli)

    block = _injected(mock_api.main_messages()[0])
    assert measure.size(block) <= render.DEFAULT_MAX_CHARS
    last = block.splitlines()[-1]
    assert last.endswith(MORE)
    shown = block.count("- long fact")
    assert last == f"{500 - shown} {MORE}"
    assert "long fact 499" in block  # newest first


def test_tool_use_writes_into_the_right_space_and_next_session_starts_with_it(
    project: tuple[Path, dict[str, str]],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
) -> None:
    work, env = project
    tool = TOOL.format("remember_fact")
    mock_api.script(
        tool_use_reply(
            tool, {"statement": "acme-api uses PostgreSQL 18 with pgvector", "subject": "acme-api"}
        ),
        text_reply("stored"),
    )
    _claude(mock_api, claude_home, work, env, claude_cli, "--allowedTools", tool)

    rows = conn.execute("SELECT space, source, workspace, statement FROM facts").fetchall()
    assert rows == [("alpha", "claude-code", str(work), "acme-api uses PostgreSQL 18 with pgvector")]

    with MockAnthropic() as second:
        _claude(second, claude_home, work, env, claude_cli)
        assert "acme-api uses PostgreSQL 18 with pgvector" in _injected(second.main_messages()[0])


def test_lore_install_claude_code_wires_a_plain_user_home(
    project: tuple[Path, dict[str, str]],
    conn: psycopg.Connection,
    claude_cli: Path,
    mock_api: MockAnthropic,
    claude_home: Path,
) -> None:
    import subprocess

    work, env = project
    facts.remember(conn, Origin("alpha", "cli", str(work)), "installed via lore install")
    lore = str(Path(VENV_BIN) / "lore")
    done = subprocess.run(
        [lore, "install", "claude-code"],
        env={**env, "HOME": str(claude_home)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert "SessionStart hook" in done.stdout
    cp = run_claude(
        "hello", cwd=work, home=claude_home, mock_url=mock_api.url, env_extra=env, claude=claude_cli
    )
    assert cp.returncode == 0, cp.stderr[-2000:]
    first = mock_api.main_messages()[0]
    assert "installed via lore install" in _injected(first)
    assert "mcp__lore__remember_fact" in tool_names(first)
