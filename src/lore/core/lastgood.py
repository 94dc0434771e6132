"""The last session-start text each workspace got, kept on this machine: what the agent reads when the
database or the server cannot answer (starting after a crash or a reboot, recovering, unreachable),
marked with its age, instead of nothing (docs/design.md, Agent events).

One file per (client, workspace) under `<data dir>/session-start/`, the folder 0700 and each file 0600,
written atomically and never through a link. The same file holds what the hook's fast path needs to
show the text again while nothing it was made from changed (`fast`: lore.hooks.quick). Standard
library only, no dataclasses: the fast path imports it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path

from lore.core.paths import LOCAL, data_dir

TYPE_CHECKING = False  # no `typing` at run time: the hook's fast path imports this
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 256 * 1024


class Kept:
    __slots__ = ("at", "fast", "space", "text")

    def __init__(self, text: str, at: float, space: str, fast: dict[str, Any] | None = None) -> None:
        self.text, self.at, self.space = text, at, space  # `at`: epoch seconds it was shown
        self.fast = fast  # what the fast path needs to show it again (None: not kept for that)


def folder(env: Mapping[str, str] | None = None) -> Path:
    return data_dir(env) / "session-start"


def _path(env: Mapping[str, str] | None, client: str, workspace: str, target: str) -> Path:
    """One file per client, workspace and where the memory came from (this machine, or a server's
    origin): a text one database gave is never shown for another."""
    key = f"{client}\0{workspace}" + ("" if target == LOCAL else f"\0{target}")
    digest = hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:32]
    return folder(env) / f"{digest}.json"


def save(
    env: Mapping[str, str] | None,
    client: str,
    workspace: str,
    text: str,
    space: str,
    fast: Mapping[str, Any] | None = None,
    target: str = LOCAL,
) -> None:
    """Keep `text` as the last one shown here (best effort: never fails a hook)."""
    try:
        where = folder(env)
        if not os.path.isdir(where):
            os.makedirs(where.parent, mode=0o700, exist_ok=True)
            os.mkdir(where, 0o700)
        path = _path(env, client, workspace, target)
        temp = where / f".tmp-{os.getpid()}-{os.urandom(4).hex()}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "w") as handle:
            kept = {"text": text, "at": time.time(), "space": space, "workspace": workspace}
            json.dump(kept | ({"fast": dict(fast)} if fast else {}), handle)
        os.replace(temp, path)
    except OSError:
        pass


def load(env: Mapping[str, str] | None, client: str, workspace: str, target: str = LOCAL) -> Kept | None:
    """The last text shown to `client` in `workspace` from `target`'s memory, or None."""
    try:
        fd = os.open(
            _path(env, client, workspace, target), os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        )
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_size > MAX_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = json.loads(handle.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    if not isinstance(data, dict) or not isinstance(data.get("text"), str):
        return None
    fast = data.get("fast")
    return Kept(
        data["text"],
        float(data.get("at") or 0),
        str(data.get("space") or ""),
        fast if isinstance(fast, dict) else None,
    )


def age(seconds: float) -> str:
    """`4 min`, `3 h`, `2 days`: how old a kept text is."""
    seconds = max(0.0, seconds)
    if seconds < 120:
        return f"{int(seconds)} s"
    if seconds < 7200:
        return f"{int(seconds // 60)} min"
    if seconds < 172800:
        return f"{int(seconds // 3600)} h"
    return f"{int(seconds // 86400)} days"


def marked(kept: Kept, why: str, now: float | None = None) -> str:
    """The kept text, led by one line saying why it is shown and how old it is."""
    now = time.time() if now is None else now
    return (
        f"lore: the shared memory cannot be read right now ({why}). What follows is what this workspace "
        f"was shown {age(now - kept.at)} ago, kept on this machine.\n{kept.text}"
    )
