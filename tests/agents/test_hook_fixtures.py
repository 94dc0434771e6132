"""Each client's own hook input (tests/agents/fixtures/) through the real `lore hook session-start
--client C`: the workspace comes from the payload, and the answer has that client's shape."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lore.core import clients
from lore.installers import Edits, Scope, get

from .conftest import LORE, Project

FIXTURES = Path(__file__).parent / "fixtures"
NESTED = ("claude-code", "gemini", "codex", "vscode")


def payload(client: str, project: Project) -> str:
    text = (FIXTURES / f"{client}.json").read_text()
    return text.replace("$PROJECT", str(project.root)).replace("$HOME", str(project.home))


def hook(
    client: str, project: Project, stdin: str, cwd: Path = Path("/")
) -> subprocess.CompletedProcess[str]:
    """Run the hook from `/` (where Cursor and Cline start things): only the payload names the project."""
    return subprocess.run(
        [LORE, "hook", "session-start", "--client", client],
        input=stdin,
        cwd=cwd,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.mark.parametrize("client", sorted(clients.CLIENTS))
def test_the_payload_names_the_project(client: str, tmp_path: Path) -> None:
    root = tmp_path / "acme-api"
    text = (FIXTURES / f"{client}.json").read_text().replace("$PROJECT", str(root))
    parsed = clients.parse_input(text)
    assert parsed.cwd == str(root)
    assert parsed.source is None or parsed.source in clients.INJECT_ON


@pytest.mark.parametrize("client", sorted(clients.CLIENTS))
def test_each_client_gets_the_memory_in_its_own_shape(
    client: str, project: Project, conn: psycopg.Connection
) -> None:
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    project.secret(conn, "BETA-SECRET launch code is 0000")
    done = hook(client, project, payload(client, project))
    assert done.returncode == 0 and not done.stderr, done.stderr
    out = done.stdout
    assert "BETA-SECRET" not in out
    if client in NESTED:
        data = json.loads(out)
        assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        memory = data["hookSpecificOutput"]["additionalContext"]
    elif client == "cursor":
        memory = json.loads(out)["additional_context"]
    elif client == "cline":
        memory = json.loads(out)["contextModification"]
    elif client == "copilot":  # flat: Copilot CLI drops the nested shape
        data = json.loads(out)
        assert list(data) == ["additionalContext"], data
        memory = data["additionalContext"]
    else:
        assert client == "opencode"
        memory = out
    opening = "[lore-memory" if client == "gemini" else "<lore-memory"  # Gemini escapes < and >
    assert memory.startswith(opening) and "acme-api deploys with make ship" in memory


def test_the_cline_script_answers_json_even_when_lore_has_nothing(
    project: Project, conn: psycopg.Connection
) -> None:
    """Cline reads the TaskStart script's stdout as JSON: the installed script always prints some."""
    project.remember(conn, "acme-api deploys with make ship", subject="acme-api")
    edits = Edits()
    get("cline").install(Scope(project.home), LORE, edits)
    edits.apply()
    script = project.home / "Documents" / "Cline" / "Hooks" / "TaskStart"

    def run(env: dict[str, str]) -> dict[str, Any]:
        done = subprocess.run(
            [str(script)],
            input=payload("cline", project),
            cwd="/",
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    shown = run(project.env)["contextModification"]
    assert "make ship" in shown
    # the database down: one line says why, then the last text this workspace was shown
    down = {**project.env, "LORE_DATABASE_URL": "postgresql://postgres@/lore?host=/nonexistent"}
    said = run(down)["contextModification"]
    assert said.startswith("lore: the shared memory cannot be read right now (the database did not answer")
    assert said.endswith(shown)
    # a config it cannot read: one line says so (never nothing), and the script still answers JSON
    broken = project.home / "broken.toml"
    broken.write_text("[[space]\n")
    said = run({**project.env, "LORE_CONFIG": str(broken)})["contextModification"]
    assert (
        said.startswith("lore: the shared memory is unavailable in this session: ") and "broken.toml" in said
    )
