"""Where lore keeps things on this machine: data (embedded database, logs) and config."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

# Where a hook's write or kept text belongs: this machine's database (else a server's origin); the
# spool (lore.core.spool) and the kept texts (lore.core.lastgood) name targets alike.
LOCAL = "local"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$LORE_DATA_DIR`, else the platform's user data dir (~/.local/share/lore on Linux)."""
    env = os.environ if env is None else env
    explicit = env.get("LORE_DATA_DIR")
    if explicit:
        return Path(explicit).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir("lore", appauthor=False))


def log_dir(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "logs"
