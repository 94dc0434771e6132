"""Where the config file is and how it is read: `$LORE_CONFIG` or the platform's config folder, a
leading `~` expanded, a regular file of at most a MiB only, and the live copy long-running
processes keep (read again when the file's stat signature changes)."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

from lore.core import files
from lore.core.config.model import Config, local_only
from lore.core.config.parse import parse_config
from lore.core.errors import ConfigError


def config_path(env: Mapping[str, str]) -> Path:
    """`$LORE_CONFIG`, else `<platform user config dir>/lore/config.toml`."""
    explicit = env.get("LORE_CONFIG", "").strip()
    if explicit:
        return Path(expand_user(explicit, env))
    from platformdirs import user_config_dir

    return Path(user_config_dir("lore", appauthor=False)) / "config.toml"


def expand_user(path: str, env: Mapping[str, str] | None = None) -> str:
    """Expand a leading `~` with HOME from `env` when it has one, else the user's home directory."""
    if path == "~" or path.startswith(("~/", "~" + os.sep)):
        home = (env or {}).get("HOME") or str(Path.home())
        return home + path[1:]
    return os.path.expanduser(path)


# A config is a few KiB; one over a MiB is not a config (and is never read whole).
MAX_CONFIG_BYTES = 1024 * 1024


def read_config_text(path: Path) -> str:
    """The config file's text: a regular file only (a FIFO or a device is never opened for reading,
    so nothing waits on it), at most MAX_CONFIG_BYTES, UTF-8. Raises ConfigError saying what to do."""
    try:
        return files.read_regular(path, MAX_CONFIG_BYTES).decode("utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(
            f"no lore config file at {path}",
            "run `lore init` to write a starter config, or point LORE_CONFIG at an existing file",
        ) from None
    except (files.NotRegular, files.TooLarge) as exc:  # a FIFO, a device, a directory; over the cap
        raise ConfigError(
            f"lore did not read its config file: {exc}",
            "point LORE_CONFIG at the lore config, a regular TOML file of a few KiB (or run `lore init`)",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            f"cannot read the lore config file {path}: {exc}",
            "make it a readable UTF-8 text file, or run `lore init` after moving it away",
        ) from None


def load_config(env: Mapping[str, str] | None = None, path: Path | None = None) -> Config:
    """This machine's config file, for this machine's database: another user's spaces it names (a
    teammate's, for a server) mean nothing here and are left out."""
    path = path if path is not None else config_path(os.environ if env is None else env)
    return local_only(parse_config(read_config_text(path), path))


Signature = tuple[int, int, int, int, int]


def file_signature(path: Path) -> Signature | None:
    """What changes when the file is edited, replaced or moved aside: (mtime_ns, size, inode,
    device, ctime_ns) from one `os.stat` (through symlinks); None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev, st.st_ctime_ns)


class LiveConfig:
    """The config file as it is now, for long-running processes (`lore serve`, `lore mcp`).

    Each `get()` costs one `os.stat`; the file is read and parsed again only when its signature
    changed (no polling thread). A file that became invalid (or went missing) raises its ConfigError
    on every call, never the last good config, until it is fixed. Thread-safe."""

    def __init__(self, env: Mapping[str, str], path: Path | None = None) -> None:
        self.env = env
        self.path = path if path is not None else config_path(env)
        self.loads = 0  # how many times the file was read (tests, logs)
        self._lock = threading.Lock()
        self._signature: Signature | None = None
        self._config: Config | None = None
        self._error: ConfigError | None = None

    def get(self) -> Config:
        # Stat before reading: an edit that lands while the file is read changes the signature
        # again, so the next call reads it once more.
        signature = file_signature(self.path)
        with self._lock:
            if self.loads == 0 or signature != self._signature:
                self._signature = signature
                self.loads += 1
                try:
                    self._config, self._error = load_config(self.env, self.path), None
                except ConfigError as exc:
                    self._config, self._error = None, exc
            if self._error is not None:  # a fresh copy: re-raising one instance grows its traceback
                raise ConfigError(self._error.message, self._error.hint)
            assert self._config is not None
            return self._config
