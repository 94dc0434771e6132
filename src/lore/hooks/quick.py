"""The session-start hook's fast path (docs/design.md, Agent events, "Speed"): the text this workspace
was shown last time, shown again at the cost of one psql query, when nothing it was made from has
changed. Anything else falls through to the full hook (lore.hooks.session_start), which composes,
records and keeps the text for next time.

What must hold, else the full hook runs:
- the kept entry was made by a full hook of this client in this workspace, from a read in which no
  other transaction was in progress, with the same lore settings in the environment;
- every file the full hook looked at (the config, the workspace's git files, the paths its facts
  name, lore's own renderer) answers as it did (lore.core.probes);
- the time it stays right has not passed (a fact's validity, the last session's "how long ago");
- nothing waits in the spool and no killed run waits to be reported (the full hook does those);
- in the database, the memory stamp of its spaces is unchanged: checked and recorded in one
  statement (lore_session_start_again, migration 0023), so a text shown is a text recorded.

Imports only the standard library and lore's small stdlib-only modules (no dataclasses, no driver):
tests/unit/test_hook_imports.py holds its import budget.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Mapping

from lore.core import hooklog, hookruns, lastgood, probes
from lore.core.paths import data_dir
from lore.db.literals import call, psql_args, psql_env, transaction_head

TYPE_CHECKING = False  # no `typing` at run time: the hook's fast path imports this
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1  # of the kept `fast` entry: an older lore's entry is not read
# The environment that decides what a session start shows (which config, space, database).
SETTINGS = (
    "LORE_SPACE",
    "LORE_CONFIG",
    "LORE_DATABASE_URL",
    "LORE_DATA_DIR",
    "LORE_URL",
    "HOME",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "LORE_ROOT_BASE",
)
_AGAIN = (
    "text[]",
    "bigint",
    "jsonb",
    "integer",
)  # lore_session_start_again's types (lore.db.calls is not imported here)


def settings_key(env: Mapping[str, str]) -> str:
    joined = "\0".join(f"{name}={env.get(name, '')}" for name in SETTINGS)
    return hashlib.sha256(joined.encode("utf-8", "replace")).hexdigest()[:32]


def run(client: str, raw: str, env: Mapping[str, str], started: float, deadline: float) -> str | None:
    """What to print (the kept text in the client's shape), or None: take the full path (also when
    anything at all goes wrong here: the full path says what)."""
    try:
        return _run(client, raw, env, started, deadline)
    except Exception:
        return None


def keep(
    env: Mapping[str, str],
    client: str,
    workspace: str,
    *,
    text: str,
    shaped: str,
    space: str,
    summary: str,
    row: Mapping[str, Any],
    spaces: list[str],
    stamp: int,
    until: float | None,
    url: str,
    psql: str,
    retention: int,
    seen: list[probes.Probe],
) -> None:
    """Keep `text` for this workspace with what the fast path needs to show it again."""
    volatile = ("session_id", "duration_ms", "event_key", "at")
    fast = {
        "v": FORMAT,
        "settings": settings_key(env),
        "until": until,
        "probes": [list(p) for p in seen],
        "shaped": shaped,
        "summary": summary,
        "row": {k: v for k, v in row.items() if k not in volatile},
        "spaces": spaces,
        "stamp": stamp,
        "url": url,
        "psql": psql,
        "retention": retention,
    }
    lastgood.save(env, client, workspace, text, space, fast)


def _run(client: str, raw: str, env: Mapping[str, str], started: float, deadline: float) -> str | None:
    try:
        data: Any = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return None
    if not isinstance(data, dict) or env.get("LORE_URL", "").strip():
        return None
    cwd, source, session_id = data.get("cwd"), data.get("source"), data.get("session_id")
    if not isinstance(cwd, str) or not cwd or source not in (None, "startup", "clear", "new"):
        return None
    kept = lastgood.load(env, client, cwd)
    fast = kept.fast if kept is not None else None
    if fast is None or not _usable(fast, env):
        return None
    marker = hookruns.begin(env, "session-start", client)
    try:
        record = _again(fast, session_id, started, deadline)
    finally:
        hookruns.end(marker)
    if record is None:
        return None
    elapsed = int((time.monotonic() - started) * 1000)
    said = f"shown: {fast.get('summary')} (kept text, unchanged), record {record}, {elapsed} ms"
    hooklog.append(client, "session-start", True, said, env)
    shaped = fast.get("shaped")
    return shaped if isinstance(shaped, str) else None


def _usable(fast: dict[str, Any], env: Mapping[str, str]) -> bool:
    if fast.get("v") != FORMAT or fast.get("settings") != settings_key(env):
        return False
    until = fast.get("until")
    if isinstance(until, int | float) and time.time() >= until:
        return False
    if _pending(env) or hookruns.abandoned(env, take=False):
        return False
    seen = fast.get("probes")
    return isinstance(seen, list) and probes.still(seen)


def _pending(env: Mapping[str, str]) -> bool:
    try:
        return any(not n.startswith(".tmp-") for n in os.listdir(data_dir(env) / "spool") if n != "failed")
    except OSError:
        return False


def _again(fast: dict[str, Any], session_id: object, started: float, deadline: float) -> int | None:
    """Record the injection if the stamp is unchanged (one psql); its id, or None (changed, or any
    failure: the full path will say what)."""
    row = dict(fast["row"])
    row.update(
        session_id=session_id[:200] if isinstance(session_id, str) and session_id else None,
        duration_ms=int((time.monotonic() - started) * 1000),
        event_key=os.urandom(16).hex(),
        at=None,
    )
    statement = call(
        "lore_session_start_again", _AGAIN, fast["spaces"], fast["stamp"], row, fast["retention"]
    )
    timeout = max(0.05, deadline - time.monotonic())
    script = f"{transaction_head(timeout)}{statement}\nCOMMIT;\n"
    try:
        done = subprocess.run(
            psql_args(fast["psql"], fast["url"]),
            input=script,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=psql_env(1),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    answer = done.stdout.strip()
    return int(answer) if done.returncode == 0 and answer.isdigit() else None
