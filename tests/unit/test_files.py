"""lore.core.files and its readers (Trust round 4, items 5 and 7): a config file, a git file or a
transcript that is a FIFO, a device, a directory or huge is refused quickly with a clear error, and a
FIFO or a device node is never opened for reading (workspace._read_small opened it before its check)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lore.core import files, workspace

LORE = str(Path(sys.executable).parent / "lore")


def test_a_regular_file_is_read_through_a_link_and_the_cap_holds(tmp_path: Path) -> None:
    target = tmp_path / "config.toml"
    target.write_bytes(b"x" * 100)
    (tmp_path / "link.toml").symlink_to(target)
    assert files.read_regular(tmp_path / "link.toml", 100) == b"x" * 100
    with pytest.raises(files.TooLarge):
        files.read_regular(target, 99)
    with open(tmp_path / "sparse", "wb") as handle:  # 4 GiB (sparse): refused from its size, not read
        handle.truncate(4 * 1024**3)
    started = time.monotonic()
    with pytest.raises(files.TooLarge):
        files.read_regular(tmp_path / "sparse", 1024 * 1024)
    assert time.monotonic() - started < 1


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
        (lambda p: p.symlink_to("/dev/zero"), "a character device"),
        (lambda p: p.mkdir(), "a directory"),
    ],
)
def test_anything_else_is_refused_without_being_opened_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Callable[[Path], Any], kind: str
) -> None:
    path = tmp_path / "thing"
    make(path)
    opened: list[tuple[str, int]] = []
    real_open = os.open

    def spy(name: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        opened.append((str(name), flags))
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    started = time.monotonic()
    with pytest.raises(files.NotRegular) as refused:
        files.read_regular(path, 1024)
    assert refused.value.kind == kind and time.monotonic() - started < 1
    assert workspace._read_small(path) is None  # the git files' reader: the same rule
    o_path = getattr(os, "O_PATH", 0)
    assert o_path, "these tests run on Linux"
    assert all(flags & o_path for name, flags in opened if name == str(path)), opened


def _lore(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    def cap_memory() -> None:  # a reader that reads /dev/zero whole fails here instead of the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    return subprocess.run(
        [LORE, *args], env=env, input=stdin, capture_output=True, text=True, timeout=20, preexec_fn=cap_memory
    )


@pytest.mark.parametrize("what", ["fifo", "dev-zero", "huge"])
def test_a_config_file_that_is_no_config_fails_fast_and_says_so(tmp_path: Path, what: str) -> None:
    """`lore which` and the session-start hook with LORE_CONFIG at a FIFO (it hung), /dev/zero (a hook
    grew to 23 GB) or a 2 MiB file: an error naming the file and what to do; the hook fails open and
    tells the agent."""
    config = tmp_path / "config.toml"
    if what == "fifo":
        os.mkfifo(config)
    elif what == "dev-zero":
        config.symlink_to("/dev/zero")
    else:
        config.write_text("# padding\n" * 210_000)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "LORE_CONFIG": str(config),
        "LORE_DATA_DIR": str(tmp_path / "data"),
        "LORE_EMBEDDER": "none",
    }
    started = time.monotonic()
    which = _lore(env, "which", str(tmp_path))
    assert which.returncode == 1 and time.monotonic() - started < 10
    assert "lore did not read its config file" in which.stderr and str(config) in which.stderr
    assert "LORE_CONFIG" in which.stderr and "Traceback" not in which.stderr
    started = time.monotonic()
    hook = _lore(
        env, "hook", "session-start", "--client", "claude-code", stdin='{"cwd": "/", "source": "startup"}'
    )
    assert hook.returncode == 0 and time.monotonic() - started < 10
    assert "lore did not read its config file" in hook.stdout  # the agent is told, in one line
    assert "lore did not read its config file" in (tmp_path / "data" / "logs" / "hook.log").read_text()
