"""The hooks' spool (lore.core.spool): private, bounded, and each write delivered exactly once however
many replayers race for it, a replayer that died included."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lore.core import spool


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"LORE_DATA_DIR": str(tmp_path / "data")}


def test_a_kept_write_is_private_and_read_back_as_it_was(env: dict[str, str]) -> None:
    path = spool.add(env, "record", spool.LOCAL, "k-1", {"text": "é\n$$", "n": 1})
    assert path is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(spool.folder(env).stat().st_mode) == 0o700
    got: list[spool.Entry] = []
    done = spool.replay(env, spool.LOCAL, got.append)
    assert done.delivered == 1 and [(e.kind, e.key, e.payload) for e in got] == [
        ("record", "k-1", {"text": "é\n$$", "n": 1})
    ]
    assert spool.pending(env) == []


def test_writes_for_another_target_stay(env: dict[str, str]) -> None:
    spool.add(env, "handoff", "https://lore.example", "h", {})
    spool.add(env, "record", spool.LOCAL, "r", {})
    got: list[str] = []
    spool.replay(env, spool.LOCAL, lambda e: got.append(e.key))
    assert got == ["r"] and len(spool.pending(env)) == 1


def test_it_is_bounded(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spool, "MAX_ENTRIES", 3)
    made = [spool.add(env, "record", spool.LOCAL, str(i), {}) for i in range(5)]
    assert [m is not None for m in made] == [True, True, True, False, False]
    assert spool.add(env, "record", spool.LOCAL, "big", {"x": "y" * spool.MAX_ENTRY_BYTES}) is None


def test_oldest_first_and_a_failed_delivery_stays_then_gives_up(env: dict[str, str]) -> None:
    for key in ("a", "b", "c"):
        spool.add(env, "record", spool.LOCAL, key, {})
    order: list[str] = []

    def deliver(entry: spool.Entry) -> None:
        order.append(entry.key)
        if entry.key == "b":
            raise RuntimeError("refused")

    done = spool.replay(env, spool.LOCAL, deliver)
    assert order == ["a", "b", "c"] and (done.delivered, done.failed) == (2, 1)
    for _ in range(spool.MAX_ATTEMPTS - 1):
        spool.replay(env, spool.LOCAL, deliver)
    assert spool.pending(env) == [] and len(spool.failed(env)) == 1


def test_with_commit_nothing_leaves_unless_the_commit_returned(env: dict[str, str]) -> None:
    for key in ("a", "b"):
        spool.add(env, "record", spool.LOCAL, key, {})

    def broken_commit() -> None:
        raise RuntimeError("lost the connection")

    done = spool.replay(env, spool.LOCAL, lambda e: None, commit=broken_commit)
    assert done.delivered == 0 and len(spool.pending(env)) == 2
    done = spool.replay(env, spool.LOCAL, lambda e: None, commit=lambda: None)
    assert done.delivered == 2 and spool.pending(env) == []


def test_racing_replayers_deliver_each_write_once(env: dict[str, str]) -> None:
    for i in range(60):
        spool.add(env, "record", spool.LOCAL, str(i), {})
    delivered: list[str] = []
    lock = threading.Lock()

    def deliver(entry: spool.Entry) -> None:
        with lock:
            delivered.append(entry.key)

    threads = [
        threading.Thread(target=spool.replay, args=(env, spool.LOCAL, deliver), kwargs={"limit": 100})
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(delivered, key=int) == [str(i) for i in range(60)]


def test_a_claim_whose_replayer_died_is_taken_back(env: dict[str, str], tmp_path: Path) -> None:
    spool.add(env, "record", spool.LOCAL, "orphan", {"x": 1})
    # A replayer in another process claims it, then dies before delivering (SIGKILL).
    code = (
        "import os, sys\n"
        "from lore.core import spool\n"
        "def die(entry): os.kill(os.getpid(), 9)\n"
        f"spool.replay({env!r}, spool.LOCAL, die)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], timeout=60)
    assert done.returncode == -9
    names = os.listdir(spool.folder(env))
    assert len(names) == 1 and names[0].startswith(".claimed-")
    got: list[spool.Entry] = []
    spool.replay(env, spool.LOCAL, got.append)
    assert [(e.key, e.payload) for e in got] == [("orphan", {"x": 1})] and spool.pending(env) == []


def test_never_written_through_a_link_nor_read_from_one(env: dict[str, str], tmp_path: Path) -> None:
    spool.folder(env).parent.mkdir(parents=True)
    target = tmp_path / "elsewhere"
    target.mkdir()
    spool.folder(env).symlink_to(target)
    assert spool.add(env, "record", spool.LOCAL, "k", {}) is None
    assert list(target.iterdir()) == []
    spool.folder(env).unlink()
    spool.add(env, "record", spool.LOCAL, "k", {})
    victim = tmp_path / "victim.json"
    victim.write_text(json.dumps({"kind": "record", "target": "local", "key": "planted", "payload": {}}))
    os.symlink(victim, spool.folder(env) / "00000000000000000001-1-aaaa.json")
    got: list[str] = []
    spool.replay(env, spool.LOCAL, lambda e: got.append(e.key))
    assert got == ["k"]
