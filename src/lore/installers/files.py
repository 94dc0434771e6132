"""A batch of edits to a client's files: planned in memory first, then written together, or only
shown (`--dry-run`). Nothing is written when planning fails, so an install never stops half-way.

Writing keeps a `.lore-backup` copy of each existing file the first time lore changes it, and
replaces files atomically (a temporary file in the same directory, then a rename). A file that is a
symbolic link is written through: its target is replaced and the link stays.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore.core.errors import ConfigError


@dataclass
class _Planned:
    before: str | None  # what is on disk (None: no file)
    after: str | None  # what lore will leave (None: remove the file)
    executable: bool = False


class Edits:
    def __init__(self) -> None:
        self._files: dict[Path, _Planned] = {}

    # -- reading (sees what is already planned) ----------------------------------------------------
    def text(self, path: Path) -> str | None:
        planned = self._files.get(path)
        if planned is not None:
            return planned.after
        return _read(path)

    def json(self, path: Path) -> dict[str, Any]:
        """The JSON object in `path` ({} when missing or empty); refuses a file it cannot parse."""
        text = self.text(path)
        if text is None or not text.strip():
            return {}
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConfigError(
                f"{path} is not valid JSON (line {getattr(exc, 'lineno', '?')}): {exc}",
                f"Fix or move {path} aside, then run the command again; lore did not change it.",
            ) from None
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path} does not hold a JSON object.", f"Fix or move {path} aside, then retry."
            )
        return data

    # -- planning ----------------------------------------------------------------------------------
    def write_text(self, path: Path, text: str, *, executable: bool = False) -> None:
        planned = self._files.get(path)
        if planned is None:
            self._files[path] = _Planned(_read(path), text, executable)
        else:
            planned.after, planned.executable = text, executable

    def write_json(self, path: Path, data: dict[str, Any]) -> None:
        self.write_text(path, json.dumps(data, indent=2) + "\n")

    def delete(self, path: Path) -> None:
        planned = self._files.get(path)
        if planned is None:
            self._files[path] = _Planned(_read(path), None)
        else:
            planned.after = None

    # -- results -----------------------------------------------------------------------------------
    def changed(self) -> list[Path]:
        return [p for p, f in self._files.items() if f.before != f.after or (f.after and _needs_mode(p, f))]

    def diff(self) -> str:
        """A unified diff of every planned change (what `--dry-run` prints)."""
        out: list[str] = []
        for path in self.changed():
            planned = self._files[path]
            before = (planned.before or "").splitlines(keepends=True)
            after = (planned.after or "").splitlines(keepends=True)
            old = str(path) if planned.before is not None else "/dev/null"
            new = str(path) if planned.after is not None else "/dev/null"
            out.extend(difflib.unified_diff(before, after, old, new))
            if out and not out[-1].endswith("\n"):
                out.append("\n")
        return "".join(out)

    def apply(self) -> None:
        for path in self.changed():
            planned = self._files[path]
            if planned.after is None:
                _backup(path)
                path.unlink(missing_ok=True)
            else:
                _write(path, planned.after, planned.executable)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path} is not UTF-8 text.", f"Fix or move {path} aside, then retry; lore did not change it."
        ) from None


def _needs_mode(path: Path, planned: _Planned) -> bool:
    if not planned.executable:
        return False
    try:
        return not os.access(path, os.X_OK)
    except OSError:
        return True


def _backup(path: Path) -> None:
    backup = path.with_name(path.name + ".lore-backup")
    if path.exists() and not backup.exists():
        shutil.copy2(path, backup)


def _write(path: Path, text: str, executable: bool) -> None:
    """Replace the file atomically. A `path` that is a symbolic link (a dotfiles setup:
    `~/.claude.json -> ~/dotfiles/claude.json`) stays one: the file it points to is replaced, in its
    own folder, so the link and the dotfiles both see the change. The backup (the target's content)
    is next to `path`, as for a plain file."""
    real = Path(os.path.realpath(path)) if path.is_symlink() else path
    real.parent.mkdir(parents=True, exist_ok=True)
    _backup(path)
    fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if real.exists():
            shutil.copymode(real, tmp)
        if executable:
            mode = os.stat(tmp).st_mode
            os.chmod(tmp, mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH | stat.S_IRUSR)
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
