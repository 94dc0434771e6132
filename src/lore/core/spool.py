"""The spool: a hook's write that could not reach its database or server (stopped, starting,
recovering, unreachable) is kept here, on this machine, and written by the next lore process that can
write (docs/design.md, Agent events). Nothing a hook writes is lost to a database that was down.

One file per write under `<data dir>/spool/` (the folder 0700, each file 0600, never written through
a link), named by the time it was made, so the oldest is replayed first. Bounded: at most
MAX_ENTRIES files of at most MAX_ENTRY_BYTES each; a write past that is refused (the hook log says so,
`lore doctor` shows a spool that does not drain).

Exactly once: a replayer claims a file by renaming it (one rename wins), delivers it, then removes
it. A replayer that dies in between leaves a claim whose process is gone; the next replayer takes it
back and delivers it again, and the delivery is idempotent (a record's `event_key`, a handoff's
session and time), so a write lands once. A file that fails MAX_ATTEMPTS times moves to `failed/`.
Standard library only: the hooks import it.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lore.core.hookruns import alive
from lore.core.paths import LOCAL as LOCAL
from lore.core.paths import data_dir

MAX_ENTRIES = 500
MAX_ENTRY_BYTES = 256 * 1024
MAX_ATTEMPTS = 5
_CLAIMED = ".claimed-"


@dataclass(frozen=True)
class Entry:
    path: Path
    kind: str  # "handoff" | "record"
    target: str  # LOCAL, or the server's origin (scheme://host:port)
    key: str
    payload: dict[str, Any]
    made: float  # when it was spooled (epoch seconds)
    attempts: int = 0


@dataclass
class Replayed:
    delivered: int = 0
    failed: int = 0  # delivery raised: left for the next replayer (or moved to failed/)
    errors: list[str] = field(default_factory=list)


def folder(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "spool"


def add(
    env: Mapping[str, str] | None, kind: str, target: str, key: str, payload: Mapping[str, Any]
) -> Path | None:
    """Keep one write; its path, or None when the spool is full or cannot be written (the caller
    says so in the hook log)."""
    try:
        where = folder(env)
        _private_dir(where)
        if len(_names(where)) >= MAX_ENTRIES:
            return None
        body = json.dumps(
            {
                "kind": kind,
                "target": target,
                "key": key,
                "payload": payload,
                "made": time.time(),
                "attempts": 0,
            },
            ensure_ascii=False,
        ).encode()
        if len(body) > MAX_ENTRY_BYTES:
            return None
        name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}.json"
        _write_new(where / f".tmp-{name}", body)
        os.replace(where / f".tmp-{name}", where / name)
        return where / name
    except OSError:
        return None


def pending(env: Mapping[str, str] | None = None) -> list[Path]:
    """The writes waiting, oldest first (a claim whose process is gone counts as waiting)."""
    where = folder(env)
    return [where / n for n in _names(where)] + [where / n for n in _orphaned(where)]


def count(env: Mapping[str, str] | None = None) -> int:
    return len(pending(env))


def failed(env: Mapping[str, str] | None = None) -> list[Path]:
    """Writes given up after MAX_ATTEMPTS deliveries that failed (`lore doctor` names them)."""
    try:
        return sorted(p for p in (folder(env) / "failed").iterdir() if p.suffix == ".json")
    except OSError:
        return []


def replay(
    env: Mapping[str, str] | None,
    target: str,
    deliver: Callable[[Entry], None],
    *,
    limit: int = 50,
    until: float | None = None,
    commit: Callable[[], None] | None = None,
) -> Replayed:
    """Deliver up to `limit` waiting writes for `target`, oldest first, until `until` (time.monotonic)
    passes. `deliver` raises to say it could not (that write stays, with one more attempt counted).
    With `commit` (deliveries in one transaction), the delivered writes leave the spool only once
    `commit()` returned; if it raises, they all stay for the next replayer."""
    done = Replayed()
    where = folder(env)
    delivered: list[Entry] = []
    for name in [*_orphaned(where), *_names(where)][: limit * 4]:
        if done.delivered + done.failed >= limit or (until is not None and time.monotonic() >= until):
            break
        entry = _claim(where, name, target)
        if entry is None:
            continue
        try:
            deliver(entry)
        except Exception as exc:  # whatever went wrong, the write stays for the next replayer
            done.failed += 1
            done.errors.append(f"{type(exc).__name__}: {getattr(exc, 'message', exc)}")
            _release(entry)
            if commit is not None:  # the transaction is lost: nothing of this batch is written
                break
            continue
        done.delivered += 1
        if commit is None:
            entry.path.unlink(missing_ok=True)
        else:
            delivered.append(entry)
    if commit is not None and delivered:
        try:
            if done.failed:
                raise RuntimeError("a delivery failed: the batch was not written")
            commit()
        except Exception as exc:
            done.errors.append(f"{type(exc).__name__}: {getattr(exc, 'message', exc)}")
            for entry in delivered:
                _release(entry, counted=False)
            done.delivered = 0
            return done
        for entry in delivered:
            entry.path.unlink(missing_ok=True)
    return done


# --- files -------------------------------------------------------------------------------------


def _names(where: Path) -> list[str]:
    try:
        return sorted(n for n in os.listdir(where) if n.endswith(".json") and not n.startswith("."))
    except OSError:
        return []


def _orphaned(where: Path) -> list[str]:
    """Claims whose process is gone."""
    out = []
    try:
        names = os.listdir(where)
    except OSError:
        return []
    for name in names:
        if not name.startswith(_CLAIMED):
            continue
        pid = name[len(_CLAIMED) :].split("-", 1)[0]
        if pid.isdigit() and not alive(int(pid)):
            out.append(name)
    return sorted(out)


def _claim(where: Path, name: str, target: str) -> Entry | None:
    """Read a waiting write for `target` and take it (rename); None if it is another target's,
    unreadable, or another replayer took it first."""
    path = where / name
    data = _read(path)
    if data is None or data.get("target") != target:
        return None
    base = name.split("-", 2)[-1] if name.startswith(_CLAIMED) else name
    claimed = where / f"{_CLAIMED}{os.getpid()}-{base}"
    try:
        os.rename(path, claimed)
    except OSError:
        return None
    payload = data.get("payload")
    if not isinstance(payload, dict) or not isinstance(data.get("kind"), str):
        _give_up(claimed)
        return None
    return Entry(
        claimed,
        str(data["kind"]),
        target,
        str(data.get("key", "")),
        payload,
        float(data.get("made") or 0),
        int(data.get("attempts") or 0),
    )


def _release(entry: Entry, *, counted: bool = True) -> None:
    """A delivery that failed: back to waiting with one more attempt (`counted`), or to failed/
    after the last."""
    attempts = entry.attempts + (1 if counted else 0)
    if attempts >= MAX_ATTEMPTS:
        _give_up(entry.path)
        return
    base = entry.path.name.split("-", 2)[-1]
    try:
        body = {
            "kind": entry.kind,
            "target": entry.target,
            "key": entry.key,
            "payload": entry.payload,
            "made": entry.made,
            "attempts": attempts,
        }
        temp = entry.path.parent / f".tmp-{base}"
        _write_new(temp, json.dumps(body, ensure_ascii=False).encode())
        os.replace(temp, entry.path.parent / base)
        entry.path.unlink(missing_ok=True)
    except OSError:
        pass


def _give_up(path: Path) -> None:
    try:
        gone = path.parent / "failed"
        _private_dir(gone)
        base = path.name.split("-", 2)[-1] if path.name.startswith(_CLAIMED) else path.name
        os.replace(path, gone / base)
    except OSError:
        pass


def _read(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES or info.st_uid != os.getuid():
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = json.loads(handle.read(MAX_ENTRY_BYTES + 1))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data if isinstance(data, dict) else None


def _write_new(path: Path, body: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)


def _private_dir(path: Path) -> None:
    """`path` (and missing parents) as 0700; an existing one must be a real directory of ours."""
    missing = []
    probe = path
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for each in reversed(missing):
        os.mkdir(each, 0o700)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise OSError(f"{path} is not a directory of this user")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)
