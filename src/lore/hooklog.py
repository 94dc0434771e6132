"""The hook log: one line per run, so a memory that silently never arrived is visible in
`lore doctor`. Lines hold the client, the outcome and a reason; never the environment or input."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from lore.paths import log_dir
from lore.redact import redact

_MAX_BYTES = 512 * 1024


@dataclass(frozen=True)
class Entry:
    at: str
    client: str
    event: str
    ok: bool
    detail: str


def path(env: Mapping[str, str] | None = None) -> Path:
    return log_dir(env) / "hook.log"


def append(client: str, event: str, ok: bool, detail: str, env: Mapping[str, str] | None = None) -> None:
    """Best effort: a hook must never fail because its log could not be written."""
    try:
        target = path(env)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and target.stat().st_size > _MAX_BYTES:
            lines = target.read_text(errors="replace").splitlines()[-500:]
            target.write_text("\n".join(lines) + "\n")
        line = {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "client": client,
            "event": event,
            "ok": ok,
            "detail": redact(detail)[:500],
        }
        with open(target, "a") as handle:
            handle.write(json.dumps(line) + "\n")
    except OSError:
        pass


def entries(env: Mapping[str, str] | None = None) -> list[Entry]:
    try:
        raw = path(env).read_text(errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for line in raw:
        try:
            d = json.loads(line)
            out.append(Entry(d["at"], d["client"], d["event"], bool(d["ok"]), d["detail"]))
        except (ValueError, KeyError, TypeError):
            continue
    return out
