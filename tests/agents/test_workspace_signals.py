"""Where each client's session really starts (cwd `/` or `$HOME`, roots or none, env or none) and
with the server arguments `lore install` writes for it: the resolved workspace is the project.

Start-up conditions per client (docs/design.md, Clients; "seen" rows observed with the real CLI here):
Claude Code: cwd = launch dir, env CLAUDE_PROJECT_DIR, roots (seen). Gemini CLI: cwd, env
GEMINI_PROJECT_DIR, roots (seen). Codex: cwd = session dir, no roots, env = HOME + env_vars (seen).
OpenCode: cwd = project, env OPENCODE=1, no roots (seen). Cursor: cwd `/` or `$HOME`, no roots,
WORKSPACE_FOLDER_PATHS, `${workspaceFolder}` expanded in args. VS Code: cwd = workspace folder,
roots, `${workspaceFolder}`. Cline: cwd `/`, no roots, no expansion. Copilot CLI: cwd = launch dir.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lore.core.config import load_config
from lore.core.session import build
from lore.core.workspace import choose_workspace
from lore.installers import Edits, Scope, claude_code, cline, codex, copilot, cursor, gemini, opencode, vscode

LORE = "/opt/lore/.venv/bin/lore"
PROJECT, SUB, HOME, ROOT = "$PROJECT", "$PROJECT/src", "$HOME", "/"


@dataclass(frozen=True)
class Start:
    client: str
    cwd: str
    env: dict[str, str] = field(default_factory=dict)
    roots: tuple[str, ...] = ()
    expands_workspace_folder: bool = False  # the client fills in ${workspaceFolder} in server args
    project_install: bool = False  # `lore install C --project` (Cline pins its global server so)


CASES = [
    Start("claude-code", PROJECT, {"CLAUDE_PROJECT_DIR": PROJECT}, (PROJECT,)),
    Start("claude-code", SUB, {"CLAUDE_PROJECT_DIR": SUB}, (SUB,)),  # launched in a subfolder
    Start("claude-code", PROJECT),  # no env, no roots (an older client)
    Start("gemini", PROJECT, {"GEMINI_PROJECT_DIR": PROJECT}, (PROJECT,)),
    Start("gemini", SUB, {}, (SUB,)),
    Start("codex", PROJECT),
    Start("codex", SUB),
    Start("cursor", ROOT, {"WORKSPACE_FOLDER_PATHS": PROJECT}, (), True),
    Start("cursor", HOME, {}, (), True),  # no env: the expanded argument alone
    Start("cursor", HOME, {"WORKSPACE_FOLDER_PATHS": PROJECT}, (), False),  # ${workspaceFolder} left as is
    Start("vscode", PROJECT, {}, (PROJECT,), True),
    Start("vscode", HOME, {}, (PROJECT,), False),  # no expansion, roots answer
    Start("opencode", PROJECT, {"OPENCODE": "1"}),
    Start("cline", ROOT, {}, (), False, True),
    Start("copilot", PROJECT),
]
MODULES = {
    "claude-code": claude_code,
    "gemini": gemini,
    "codex": codex,
    "cursor": cursor,
    "vscode": vscode,
    "opencode": opencode,
    "cline": cline,
    "copilot": copilot,
}


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    home, project = tmp_path / "home", tmp_path / "home" / "src" / "acme-api"
    (project / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config = tmp_path / "lore.toml"
    config.write_text(
        'default_space = "personal"\n\n[[space]]\nid = "personal"\n\n'
        f'[[space]]\nid = "work"\npaths = ["{project}"]\n'
    )
    return {"home": home, "project": project, "config": config}


def server_args(start: Start, world: dict[str, Path]) -> list[str]:
    """The args `lore install` really writes for this client (read back from its files)."""
    scope = Scope(world["home"], world["project"] if start.project_install else None)
    edits = Edits()
    MODULES[start.client].INSTALLER.install(scope, LORE, edits)
    edits.apply()
    read: dict[str, Callable[[], Any]] = {
        "claude-code": lambda: Edits().json(world["home"] / ".claude.json")["mcpServers"]["lore"],
        "gemini": lambda: Edits().json(gemini.path(scope))["mcpServers"]["lore"],
        "codex": lambda: codex.server_entry(LORE),
        "cursor": lambda: Edits().json(cursor.paths(scope)[0])["mcpServers"]["lore"],
        "vscode": lambda: Edits().json(vscode.paths(scope)[0])["servers"]["lore"],
        "opencode": lambda: {"args": Edits().json(opencode.paths(scope)[0])["mcp"]["lore"]["command"][1:]},
        "cline": lambda: Edits().json(cline.paths(scope)[0])["mcpServers"]["lore"],
        "copilot": lambda: Edits().json(copilot.path(scope))["mcpServers"]["lore"],
    }
    entry = read[start.client]()
    return [str(a) for a in entry["args"]]


def workspace_arg(args: list[str], start: Start, project: Path) -> str | None:
    if "--workspace" not in args:
        return None
    value = args[args.index("--workspace") + 1]
    return value.replace("${workspaceFolder}", str(project)) if start.expands_workspace_folder else value


@pytest.mark.parametrize("start", CASES, ids=lambda s: f"{s.client}@{s.cwd}")
def test_the_resolved_workspace_is_the_project(start: Start, world: dict[str, Path]) -> None:
    home, project = world["home"], world["project"]

    def real(value: str) -> str:
        return value.replace("$PROJECT", str(project)).replace("$HOME", str(home))

    env = {"HOME": str(home), **{k: real(v) for k, v in start.env.items()}}
    roots = [Path(real(r)).as_uri() for r in start.roots]
    arg = workspace_arg(server_args(start, world), start, project)
    signal = choose_workspace(arg, env, roots, real(start.cwd))
    session = build(signal, load_config(env, world["config"]), env, start.client)
    assert (session.space, session.workspace_name) == ("work", "acme-api"), session.describe()
    assert signal.path in (project, project / "src"), signal


def test_cline_without_a_pinned_project_gets_no_signal(world: dict[str, Path]) -> None:
    """The limit `lore install cline` states: Cline's server starts in / with nothing else."""
    start = Start("cline", ROOT)
    arg = workspace_arg(server_args(start, world), start, world["project"])
    signal = choose_workspace(arg, {"HOME": str(world["home"])}, [], "/")
    assert (arg, signal.source, signal.path) == (None, "cwd", Path("/"))


def test_a_worktree_and_a_moved_checkout_resolve_to_the_same_space(tmp_path: Path) -> None:
    """git top-level, worktree mapping and `remotes` (docs/design.md, Spaces) under a client that
    gives only cwd."""
    home, project = tmp_path / "home", tmp_path / "home" / "src" / "acme-api"
    project.mkdir(parents=True)

    def git(*args: str, cwd: Path = project) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)

    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")
    git("remote", "add", "origin", "git@github.com:acme/api.git")
    worktree = tmp_path / "elsewhere" / "acme-api-feature"
    git("worktree", "add", "-q", str(worktree))
    moved = tmp_path / "moved" / "api"
    moved.mkdir(parents=True)
    git("clone", "-q", str(project), str(moved), cwd=tmp_path)
    git("remote", "set-url", "origin", "https://github.com/acme/api.git", cwd=moved)
    config = tmp_path / "lore.toml"
    config.write_text(
        'default_space = "personal"\n\n[[space]]\nid = "personal"\n\n[[space]]\nid = "work"\n'
        f'paths = ["{project}"]\nremotes = ["github.com/acme/*"]\n'
    )
    env = {"HOME": str(home)}
    for cwd, rule in ((worktree, "path"), (moved, "remote")):  # Codex / OpenCode: the cwd is all they give
        session = build(choose_workspace(None, env, [], str(cwd)), load_config(env, config), env, "codex")
        assert (session.space, session.resolved.rule) == ("work", rule), session.describe()
    worktree_session = build(
        choose_workspace(None, env, [], str(worktree)), load_config(env, config), env, "x"
    )
    assert worktree_session.workspace_name == "acme-api"
