"""Trust round 4, items 5 and 7: `lore listen` printed other agents' messages with their terminal
escapes (OSC 52 sets the clipboard where a terminal allows it, OSC 0 the window title, CSI clears the
screen) and put the message text in notify-send's argv, which every local user can read. The real
`lore listen` against the real database, with a notify-send on PATH that records its arguments."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from lore.cli import work

from .conftest import write_config
from .test_listen import LORE, Lines

HOSTILE = (
    "SECRET-BODY \x1b]52;c;ZWNobyBwd25lZA==\x07 \x1b]0;pwned title\x07\x1b[2J\x1b[H \x9b31m"
    "\x9d0;c1 title\x9c\rhidden\x08\x7f\u202eevil\nhttps://x.test [12:00:00] message m_99 from alpha: fake"
)


def _fake_program(where: Path, name: str, record: Path) -> None:
    """A program that writes its arguments (NUL-separated) and standard input to `record`."""
    script = where / name
    script.write_text(f'#!/bin/sh\nprintf "%s\\0" "$@" >> {record}.argv\ncat >> {record}.stdin\n')
    script.chmod(0o755)


def _clean(text: str) -> bool:
    return (
        not any((ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) <= 0x9F for c in text)
        and "\u202e" not in text
    )


def test_lore_listen_prints_no_escape_and_notifies_without_the_text(
    private_db: tuple[dict[str, str], str], tmp_path: Path
) -> None:
    env, url = private_db
    dirs = {name: tmp_path / name for name in ("alpha", "beta", "gamma")}
    for d in dirs.values():
        d.mkdir()
    config = tmp_path / "config.toml"
    write_config(config, dirs)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _fake_program(bin_dir, "notify-send", tmp_path / "notify")
    proc_env = {
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp_path),
        "LORE_CONFIG": str(config),
        "LORE_DATA_DIR": env["LORE_DATA_DIR"],
        "LORE_EMBEDDER": "broken",
        "DISPLAY": ":99",
    }
    proc = subprocess.Popen(
        [LORE, "listen"], cwd=dirs["alpha"], env=proc_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    stream = io.TextIOWrapper(proc.stdout, encoding="utf-8", newline="")  # a \r stays a \r
    out = Lines(stream)
    try:
        assert out.next().startswith("Listening")
        with psycopg.connect(url) as c:
            c.execute(
                "INSERT INTO messages (to_space, from_space, body, source) VALUES ('alpha', 'beta', %s, %s)",
                (HOSTILE, "evil\x1b]0;agent\x07"),
            )
        first, second = out.next(), out.next()
        deadline = time.monotonic() + 20
        while not (tmp_path / "notify.argv").exists() and time.monotonic() < deadline:
            time.sleep(0.05)  # the notification runs after the line is printed
        time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        stream.close()
        if proc.stderr is not None:
            proc.stderr.close()
    printed = first + second
    assert "SECRET-BODY" in first and "(evil)" in first
    assert _clean(printed), repr(printed)
    assert "\x1b" not in printed and "\x07" not in printed and "\r" not in printed
    assert second.startswith("    ") and "fake" in second  # a line break cannot forge a line of lore's
    argv = (tmp_path / "notify.argv").read_bytes().decode("utf-8").split("\0")
    assert argv[:2] == ["--", "lore: message m_1 from beta"], argv
    assert not any("SECRET-BODY" in arg or "\x1b" in arg for arg in argv), argv


def test_the_macos_notification_reads_its_text_from_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """osascript gets the script (with the message text, escapes removed) on standard input, never in
    its arguments."""
    _fake_program(tmp_path, "osascript", tmp_path / "osa")
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ.get('PATH', '')}")
    monkeypatch.setattr(sys, "platform", "darwin")
    notify = work._notifier()
    assert notify is not None
    work._show("message m_1 from beta (t): hi", notify, "lore: message m_1 from beta", HOSTILE)
    argv = (tmp_path / "osa.argv").read_text().split("\0")
    stdin = (tmp_path / "osa.stdin").read_text()
    assert not any("SECRET-BODY" in arg for arg in argv), argv
    assert "display notification" in stdin and "SECRET-BODY" in stdin and _clean(stdin.rstrip("\n"))
