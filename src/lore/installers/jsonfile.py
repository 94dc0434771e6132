"""Read-merge-write of a client's JSON config: refuse to touch a file we cannot parse, back it up
before the first change, write atomically."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from lore.errors import ConfigError


def load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    text = path.read_text()
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid JSON (line {getattr(exc, 'lineno', '?')}): {exc}",
            f"Fix or move {path} aside, then run the command again; lore did not change it.",
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object.", f"Fix or move {path} aside, then retry.")
    return data


def save(path: Path, data: dict[str, Any]) -> None:
    """Atomic write; the first time lore changes an existing file, a `.lore-backup` copy is kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = path.with_name(path.name + ".lore-backup")
    if path.exists() and not backup.exists():
        shutil.copy2(path, backup)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)
