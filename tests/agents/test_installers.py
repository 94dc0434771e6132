"""Every installer: the files it writes (golden files), merging with what the user has, idempotence,
backups, a faithful uninstall, `--dry-run`, and refusals that leave every file as it was.

Goldens live in tests/agents/golden/<client>/{user,project}/, with the fake home written `$HOME`.
Regenerate them after a deliberate change with `LORE_UPDATE_GOLDEN=1 pytest tests/agents/test_installers.py`
and review the diff.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lore.core.errors import ConfigError
from lore.installers import Edits, Scope, get, names, shared

LORE = "/opt/lore/.venv/bin/lore"
GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("LORE_UPDATE_GOLDEN") == "1"
VSCODE_USER = ".config/Code/User"
CLINE = f"{VSCODE_USER}/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"

GITHUB = {"command": "github-mcp-server", "args": ["stdio"]}
#: What each client's user already has; lore must keep all of it.
BEFORE: dict[str, dict[str, str]] = {
    "claude-code": {
        ".claude.json": json.dumps({"numStartups": 3, "mcpServers": {"github": GITHUB}}),
        ".claude/settings.json": json.dumps(
            {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
        ),
    },
    "gemini": {
        ".gemini/settings.json": json.dumps(
            {
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "mcpServers": {"github": GITHUB},
                "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]},
            }
        ),
    },
    "codex": {
        ".codex/config.toml": (
            '# my Codex settings\nmodel = "o4"\n\n[mcp_servers.github]\ncommand = "github-mcp-server"\n'
            'args = ["stdio"]\n\n# projects I trust\n[projects."/home/me/src"]\ntrust_level = "trusted"\n'
        ),
        ".codex/hooks.json": json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}
        ),
    },
    "cursor": {
        ".cursor/mcp.json": json.dumps({"mcpServers": {"github": GITHUB}}),
        ".cursor/hooks.json": json.dumps(
            {
                "version": 1,
                "hooks": {"sessionStart": [{"command": "echo hi"}], "afterFileEdit": [{"command": "fmt"}]},
            }
        ),
    },
    "vscode": {
        f"{VSCODE_USER}/mcp.json": json.dumps(
            {"inputs": [], "servers": {"github": {"type": "http", "url": "https://example.test/mcp"}}}
        ),
    },
    "opencode": {
        ".config/opencode/opencode.json": json.dumps(
            {"$schema": "https://opencode.ai/config.json", "model": "anthropic/claude", "mcp": {}}
        ),
    },
    "cline": {CLINE: json.dumps({"mcpServers": {"github": {**GITHUB, "disabled": False}}})},
    "copilot": {
        ".copilot/mcp-config.json": json.dumps({"mcpServers": {"github": {**GITHUB, "tools": ["*"]}}})
    },
}


def write_tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def snapshot(root: Path, home: Path) -> dict[str, str]:
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.endswith(".lore-backup")):
        text = path.read_text().replace(str(home), "$HOME")
        if os.access(path, os.X_OK):
            text = "# (executable)\n" + text
        out[str(path.relative_to(root))] = text
    return out


def check_golden(name: str, files: dict[str, str]) -> None:
    folder = GOLDEN / name
    if UPDATE:
        for rel, text in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_text(text)
    expected = {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.rglob("*")) if p.is_file()}
    assert files == expected, f"golden {folder} differs (LORE_UPDATE_GOLDEN=1 regenerates it)"


def run(client: str, scope: Scope, action: str = "install") -> list[str]:
    installer, edits = get(client), Edits()
    changes = (
        installer.install(scope, LORE, edits) if action == "install" else installer.uninstall(scope, edits)
    )
    edits.apply()
    return [c.action for c in changes]


def same(before: str, after: str, rel: str) -> bool:
    return json.loads(before) == json.loads(after) if not rel.endswith(".toml") else before == after


@pytest.mark.parametrize("client", names())
def test_user_scope_golden_merge_idempotent_backup_uninstall(client: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_tree(home, BEFORE[client])
    scope = Scope(home)

    first = run(client, scope)
    assert "added" in first or "updated" in first
    check_golden(f"{client}/user", snapshot(home, home))
    after_install = snapshot(home, home)
    assert set(run(client, scope)) == {"unchanged"}  # idempotent
    assert snapshot(home, home) == after_install
    for rel, text in BEFORE[client].items():  # the user's own file was kept before lore changed it
        assert (home / (rel + ".lore-backup")).read_text() == text

    assert "removed" in run(client, scope, "uninstall")
    for rel, text in BEFORE[client].items():
        assert same(text, (home / rel).read_text(), rel), rel
    for rel, text in snapshot(home, home).items():
        assert "lore hook" not in text and '"lore"' not in text and "mcp_servers.lore" not in text, rel
    assert run(client, scope, "uninstall") == ["unchanged"]


@pytest.mark.parametrize("client", names())
def test_project_scope_golden(client: str, tmp_path: Path) -> None:
    home, repo = tmp_path / "home", tmp_path / "home" / "src" / "acme-api"
    repo.mkdir(parents=True)
    run(client, Scope(home, repo))
    check_golden(f"{client}/project", snapshot(home, home))


@pytest.mark.parametrize("client", names())
def test_dry_run_writes_nothing_and_shows_the_change(client: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_tree(home, BEFORE[client])
    before = snapshot(home, home)
    edits = Edits()
    changes = get(client).install(Scope(home), LORE, edits)
    diff = edits.diff()
    assert snapshot(home, home) == before
    assert not list(home.rglob("*.lore-backup"))
    for change in changes:
        if change.action != "unchanged":
            assert f"+++ {change.path}" in diff
    assert LORE in diff


@pytest.mark.parametrize("client", names())
def test_broken_json_is_refused_and_nothing_is_written(client: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = {rel: ("{broken" if rel.endswith(".json") else "[broken") for rel in BEFORE[client]}
    write_tree(home, files)
    with pytest.raises(ConfigError) as err:
        run(client, Scope(home))
    assert "lore did not change it" in err.value.hint or "lore changed nothing" in err.value.hint
    assert snapshot(home, home) == files


def test_cline_keeps_a_foreign_taskstart_hook(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_tree(home, {**BEFORE["cline"], "Documents/Cline/Hooks/TaskStart": "#!/bin/sh\necho mine\n"})
    before = snapshot(home, home)
    with pytest.raises(ConfigError, match="not lore's") as err:
        run("cline", Scope(home))
    assert "hook session-start --client cline" in err.value.hint
    assert snapshot(home, home) == before


def test_cursor_refuses_an_unknown_hooks_version(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_tree(home, {".cursor/hooks.json": json.dumps({"version": 2, "hooks": {}})})
    with pytest.raises(ConfigError, match="version 2"):
        run("cursor", Scope(home))
    assert not (home / ".cursor" / "mcp.json").exists()


def test_copilot_refuses_an_unknown_hooks_version(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_tree(home, {".copilot/hooks/lore.json": json.dumps({"version": 2, "hooks": {}})})
    with pytest.raises(ConfigError, match="version 2"):
        run("copilot", Scope(home))
    assert not (home / ".copilot" / "mcp-config.json").exists()


@pytest.mark.parametrize("project", [False, True])
def test_vscode_and_copilot_share_one_hook_file(tmp_path: Path, project: bool) -> None:
    """Both write lore.json in Copilot's hook folder: each edits only its own entry, and the file goes
    with the last of them."""
    home = tmp_path / "home"
    repo = home / "src" / "acme-api" if project else None
    scope = Scope(home, repo)
    path = (repo / ".github" if repo else home / ".copilot") / "hooks" / "lore.json"
    for first, second in (("vscode", "copilot"), ("copilot", "vscode")):
        run(first, scope)
        run(second, scope)
        hooks = json.loads(path.read_text())["hooks"]
        assert [h["command"] for h in hooks["SessionStart"]] == [f"{LORE} hook session-start --client vscode"]
        assert hooks["sessionStart"] == [
            {"type": "command", "bash": f"{LORE} hook session-start --client copilot", "timeoutSec": 5}
        ]
        assert set(run(first, scope)) == {"unchanged"}
        run(first, scope, "uninstall")
        assert list(json.loads(path.read_text())["hooks"]) == [
            "sessionStart" if first == "vscode" else "SessionStart"
        ]
        run(second, scope, "uninstall")
        assert not path.exists()


def test_codex_refuses_an_inline_table_it_cannot_edit(tmp_path: Path) -> None:
    home = tmp_path / "home"
    text = '[mcp_servers]\nlore = { command = "/old/lore", args = ["mcp"] }\n'
    write_tree(home, {".codex/config.toml": text})
    with pytest.raises(ConfigError, match="does not edit") as err:
        run("codex", Scope(home))
    assert "[mcp_servers.lore]" in err.value.hint
    assert (home / ".codex" / "config.toml").read_text() == text
    assert not (home / ".codex" / "hooks.json").exists()


def test_opencode_jsonc_is_not_rewritten(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_tree(home, {".config/opencode/opencode.jsonc": '{\n  // mine\n  "model": "x"\n}\n'})
    with pytest.raises(ConfigError, match="JSON with comments") as err:
        run("opencode", Scope(home))
    assert '"command"' in err.value.hint and LORE in err.value.hint


def test_a_moved_lore_is_updated_in_place(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for client in names():
        run(client, Scope(home))
    moved, edits = "/new place/lore", Edits()
    for client in names():
        changes = get(client).install(Scope(home), moved, edits)
        assert "updated" in {c.action for c in changes}, client
    edits.apply()
    tree = "\n".join(snapshot(home, home).values())
    assert LORE not in tree
    assert "'/new place/lore' hook session-start" in tree  # quoted for the shell
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert len(settings["hooks"]["SessionStart"]) == 1  # replaced, not added twice


def test_is_ours_matches_lores_hook_for_that_client_only() -> None:
    assert shared.is_ours("/x/lore hook session-start --client cline", "cline")
    assert shared.is_ours("out=$('/a b/lore' hook session-start --client cline)", "cline")
    assert not shared.is_ours("/x/lore hook session-start --client cline-beta", "cline")
    assert not shared.is_ours("/x/lore hook session-start --client claude-code", "cline")
    assert not shared.is_ours("echo hi", "cline")


def test_vscode_user_dir_per_platform(tmp_path: Path) -> None:
    assert shared.vscode_user_dir(tmp_path, {}, "linux") == tmp_path / ".config/Code/User"
    assert shared.vscode_user_dir(tmp_path, {"XDG_CONFIG_HOME": "/x"}, "linux") == Path("/x/Code/User")
    assert (
        shared.vscode_user_dir(tmp_path, {}, "darwin") == tmp_path / "Library/Application Support/Code/User"
    )
    assert shared.vscode_user_dir(tmp_path, {"APPDATA": "/w"}, "win32") == Path("/w/Code/User")


def test_cli_project_flag_uses_the_repository_root_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    repo, home = tmp_path / "acme-api", tmp_path / "home"
    (repo / "src" / "deep").mkdir(parents=True)
    (repo / ".git").mkdir()
    home.mkdir()
    lore = str(Path(sys.executable).parent / "lore")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home)}
    done = subprocess.run(
        [lore, "install", "cursor", "--project", "--dry-run"],
        cwd=repo / "src" / "deep",
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert f"{repo}/.cursor/mcp.json" in done.stdout and "dry run: nothing was written" in done.stdout
    assert "fire-and-forget" in done.stdout  # Cursor's limit is said, not hidden
    assert not (repo / ".cursor").exists() and not list(home.iterdir())

    done = subprocess.run(
        [lore, "install", "copilot"], cwd=repo, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert f"{home}/.copilot/hooks/lore.json: sessionStart hook (5 s)" in done.stdout
    assert (home / ".copilot" / "mcp-config.json").exists()


def test_install_says_added_for_a_file_it_creates_and_updated_only_for_lores_own_entries(
    tmp_path: Path,
) -> None:
    """What a new user reads: a file lore creates is "added ... (new file)", never "updated"; a
    second install with a moved lore says "updated"; a third "unchanged"."""
    lore = str(Path(sys.executable).parent / "lore")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LORE_DATA_DIR": str(tmp_path / "d")}

    def install() -> list[str]:
        done = subprocess.run(
            [lore, "install", "claude-code"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return [
            line for line in done.stdout.splitlines() if line.startswith(("added", "updated", "unchanged"))
        ]

    first = install()
    assert len(first) == 2 and all(line.startswith("added") and line.endswith("(new file)") for line in first)
    assert set(line.split()[0] for line in install()) == {"unchanged"}
    settings = tmp_path / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace(lore, "/old/place/lore"))
    again = install()
    assert [line.split()[0] for line in again] == ["unchanged", "updated"] and "(new file)" not in again[1]
