"""`lore hook prompt`: before each prompt, what arrived for this space since the session's last
prompt (unread messages, tasks new in the inbox), briefly; nothing at all when nothing arrived.

Per session (the hook input's `session_id`), a small state file under `<data dir>/prompt-hook/`
keeps the highest message id and task id already shown, so each item is shown once per session. It
only looks: messages stay unread until read_messages reads them. The first prompt of a session
shows what is still unread and what waits in the inbox (the session-start text only counted them).

Lean and fail-open like the session-start hook: read through the wheel's `psql`, never a driver;
every failure prints nothing, exits 0 and appends the reason to the hook log.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lore.core import clients, inbox
from lore.core import hooklog as log
from lore.core.config import load_config
from lore.core.errors import HookFailure
from lore.core.paths import data_dir
from lore.core.rows import Message, Task, from_json
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal
from lore.db import embedded, psql
from lore.hooks import guard

STATE_TTL = 14 * 24 * 3600  # state files of sessions idle this long are removed
EVENT = "prompt"


def _nested(event: str) -> Callable[[str], str]:
    def shape(text: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})

    return shape


# The per-prompt hook each client has, and the output shape it reads.
SHAPES: dict[str, Callable[[str], str]] = {"claude-code": _nested("UserPromptSubmit")}

_SQL = r"""
\set ON_ERROR_STOP on
BEGIN;
SET LOCAL statement_timeout = :timeout_ms;
SELECT to_regproc('lore_inbox_since') IS NOT NULL AS current \gset
\if :current
SELECT json_build_object(
    'messages', coalesce((SELECT json_agg(m ORDER BY m.num)
                          FROM lore_unread_since(:'space', :after_message, :max_items) m), '[]'::json),
    'message_count', coalesce((SELECT max(total) FROM lore_unread_since(:'space', :after_message, 1)), 0),
    'tasks', coalesce((SELECT json_agg(t ORDER BY t.lineage)
                       FROM lore_inbox_since(:'space', :after_task, :max_items) t), '[]'::json),
    'task_count', coalesce((SELECT max(total) FROM lore_inbox_since(:'space', :after_task, 1)), 0),
    'last_message', (SELECT coalesce(max(id), 0) FROM messages),
    'last_task', (SELECT coalesce(max(lineage), 0) FROM tasks));
\else
SELECT '{"messages": [], "tasks": [], "message_count": 0, "task_count": 0}';
\endif
COMMIT;
"""


def run(client_name: str, raw: str, env: Mapping[str, str], started: float | None = None) -> str:
    """What to print on stdout: the client's shape around what arrived, or '' (nothing)."""
    started = time.monotonic() if started is None else started
    return guard.run(client_name, EVENT, env, started, lambda: _run(client_name, raw, env, started))


def _run(client_name: str, raw: str, env: Mapping[str, str], started: float) -> str:
    shape = SHAPES.get(client_name)
    if shape is None:
        clients.client(client_name)  # an unknown name: ValueError listing the known ones
        log.append(client_name, EVENT, True, "no per-prompt injection for this client; nothing sent", env)
        return ""
    if env.get("LORE_URL", "").strip():
        detail = "hosted mode (LORE_URL): no per-prompt injection yet; nothing sent"
        log.append(client_name, EVENT, True, detail, env)
        return ""
    data: Any = json.loads(raw) if raw.strip() else {}
    hook_input = clients.parse_input(raw)
    if not hook_input.cwd:
        raise HookFailure("hook input has no cwd: cannot tell the workspace")
    session_id = data.get("session_id") if isinstance(data, dict) else None
    config = load_config(env)
    session = build(WorkspaceSignal(Path(hook_input.cwd), "hook cwd"), config, env, client_name)
    url = env.get("LORE_DATABASE_URL") or config.database_url or embedded.running_url(env)
    if url is None:
        raise HookFailure("the embedded database is not running (`lore db start` starts it)")
    state_file = _state_path(
        env, session.space, session_id if isinstance(session_id, str) else hook_input.cwd
    )
    seen = _load(state_file)
    remaining = guard.remaining(started, env)
    variables = {
        "space": session.space,
        "after_message": str(seen.get("message", 0)),
        "after_task": str(seen.get("task", 0)),
        "max_items": str(inbox.PROMPT_MAX_ITEMS),
    }
    found = psql.psql_json(url, _SQL, variables, timeout=max(0.05, remaining - 0.05))
    shown_messages = [from_json(Message, m) for m in found["messages"]]
    shown_tasks = [from_json(Task, t) for t in found["tasks"]]
    if "last_message" in found:
        _save(state_file, {"message": int(found["last_message"]), "task": int(found["last_task"])})
    text = inbox.prompt_text(
        session.space,
        shown_messages,
        shown_tasks,
        more_messages=int(found["message_count"]) - len(shown_messages),
        more_tasks=int(found["task_count"]) - len(shown_tasks),
    )
    elapsed = int((time.monotonic() - started) * 1000)
    log.append(
        client_name,
        EVENT,
        True,
        f"space {session.space}: {found['message_count']} new messages, {found['task_count']} new inbox "
        f"tasks, {elapsed} ms",
        env,
    )
    return shape(text) if text else ""


def _state_path(env: Mapping[str, str], space: str, session: str) -> Path:
    digest = hashlib.sha256(f"{space}\0{session}".encode()).hexdigest()[:32]
    return data_dir(env) / "prompt-hook" / f"{digest}.json"


def _load(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if k in ("message", "task") and isinstance(v, int)}


def _save(path: Path, seen: dict[str, int]) -> None:
    """Atomic replace; now and then remove the state of long-idle sessions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as handle:
        json.dump(seen, handle)
    os.replace(tmp, path)
    if int.from_bytes(os.urandom(1), "big") < 8:  # ~3% of runs
        cutoff = time.time() - STATE_TTL
        for old in path.parent.glob("*.json"):
            try:
                if old.stat().st_mtime < cutoff:
                    old.unlink()
            except OSError:
                pass
