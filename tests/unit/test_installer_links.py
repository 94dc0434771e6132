"""Installers and a dotfiles setup: a client's config file that is a symbolic link (`~/.claude.json ->
~/dotfiles/claude.json`) stays a link; lore writes through it to its target, keeps the target's mode,
and backs the target's content up next to the link, as for a plain file. Every client, every file it
writes (they all go through `installers.files.Edits`)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lore.installers import Edits, Scope, get, names

LORE = "/opt/lore/.venv/bin/lore"


def _files_written(client: str, home: Path) -> list[str]:
    """What an install into an empty home writes, relative to it."""
    edits = Edits()
    get(client).install(Scope(home), LORE, edits)
    return sorted(str(p.relative_to(home)) for p in edits.changed())


def _mine(rel: str) -> str | None:
    """What the user already has in the file, something lore must keep; None: a script or plugin lore
    owns whole (the link points to a file that is not there yet)."""
    if rel.endswith(".json"):
        return '{"mine": true}\n'
    if rel.endswith(".toml"):
        return '# mine\nmodel = "o4"\n'
    return None


def _run(client: str, home: Path, action: str) -> None:
    edits = Edits()
    installer = get(client)
    if action == "install":
        installer.install(Scope(home), LORE, edits)
    else:
        installer.uninstall(Scope(home), edits)
    edits.apply()


@pytest.mark.parametrize("client", names())
def test_a_linked_config_file_stays_a_link_and_its_target_is_updated(client: str, tmp_path: Path) -> None:
    written = _files_written(client, tmp_path / "scratch")
    assert written
    home, dotfiles = tmp_path / "home", tmp_path / "dotfiles"
    targets: dict[str, Path] = {}
    for rel in written:
        target = dotfiles / rel.replace("/", "__")
        target.parent.mkdir(parents=True, exist_ok=True)
        mine = _mine(rel)
        if mine is not None:
            target.write_text(mine)
            target.chmod(0o640)
        link = home / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(target)
        targets[rel] = target

    _run(client, home, "install")
    for rel, target in targets.items():
        link = home / rel
        assert link.is_symlink() and link.readlink() == target, f"{rel} is no longer a link"
        mine = _mine(rel)
        backup = home / (rel + ".lore-backup")
        if mine is None:
            assert target.is_file() and not backup.exists(), rel
            continue
        assert target.read_text() != mine, f"{rel}: the target was not updated"
        assert '"mine": true' in target.read_text() or "# mine" in target.read_text(), rel
        assert stat.S_IMODE(target.stat().st_mode) == 0o640, rel  # the target's mode is kept
        assert backup.read_text() == mine and not backup.is_symlink(), rel
    assert sorted(p.name for p in dotfiles.iterdir()) == sorted(t.name for t in targets.values())

    _run(client, home, "uninstall")
    for rel in targets:
        link = home / rel
        assert not link.exists() or link.is_symlink(), f"{rel}: uninstall replaced the link"


def test_a_link_to_a_file_that_does_not_exist_yet_is_written_through(tmp_path: Path) -> None:
    home, dotfiles = tmp_path / "home", tmp_path / "dotfiles"
    home.mkdir()
    dotfiles.mkdir()
    (home / ".claude.json").symlink_to(dotfiles / "claude.json")
    _run("claude-code", home, "install")
    assert (home / ".claude.json").is_symlink()
    assert '"lore"' in (dotfiles / "claude.json").read_text()
    assert not (home / ".claude.json.lore-backup").exists()  # nothing was there to keep


def test_a_relative_link_is_followed_from_its_own_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "dotfiles").mkdir(parents=True)
    (home / "dotfiles" / "claude.json").write_text("{}\n")
    os.symlink("dotfiles/claude.json", home / ".claude.json")
    _run("claude-code", home, "install")
    assert os.readlink(home / ".claude.json") == "dotfiles/claude.json"
    assert '"lore"' in (home / "dotfiles" / "claude.json").read_text()
