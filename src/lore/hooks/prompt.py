"""`lore hook prompt`: before each prompt, what arrived for this space since the session's last prompt
(unread messages, tasks new in the inbox), briefly; nothing at all when nothing arrived.

An adapter: the inbox is read, composed and recorded by the use case (lore.service.events.prompt),
here through psql, or on the server (`POST /api/hooks/prompt`) in hosted mode. Per session (the hook
input's `session_id`), a small state file under `<data dir>/prompt-hook/` keeps the newest message and
task ids already shown, so each item is shown once per session, and the last failure told, so a
database that is down is said once per session, not before every prompt.
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

from lore.core import clients
from lore.core import hooklog as log
from lore.core.config import load_config
from lore.core.errors import HookFailure
from lore.core.outcomes import Outcome, agent_line
from lore.core.paths import data_dir
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal
from lore.hooks import gateway, guard
from lore.service.events import prompt as use_case

STATE_TTL = 14 * 24 * 3600  # state files of sessions idle this long are removed
EVENT = "prompt"


def _nested(event: str) -> Callable[[str], str]:
    def shape(text: str) -> str:
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})

    return shape


# The per-prompt hook each client has, and the output shape it reads.
SHAPES: dict[str, Callable[[str], str]] = {"claude-code": _nested("UserPromptSubmit")}


def run(client_name: str, raw: str, env: Mapping[str, str], started: float | None = None) -> str:
    """What to print on stdout: the client's shape around what arrived, or '' (nothing)."""
    started = time.monotonic() if started is None else started
    shape = SHAPES.get(client_name)
    if shape is None:
        try:
            clients.client(client_name)
        except ValueError as exc:  # an unknown name: the message lists the known ones
            log.append(client_name, EVENT, False, str(exc), env)
            return ""
        log.append(client_name, EVENT, True, "no per-prompt injection for this client; nothing sent", env)
        return ""
    return guard.run(client_name, EVENT, env, started, lambda r: _run(r, shape, raw), _once, shape)


def _run(run: guard.Run, shape: Callable[[str], str], raw: str) -> str:
    env, client = run.env, run.client
    data: Any = json.loads(raw) if raw.strip() else {}
    hook_input = clients.parse_input(raw)
    if not hook_input.cwd:
        raise HookFailure("the agent's hook input names no directory (cwd): lore cannot tell the workspace")
    session_id = data.get("session_id") if isinstance(data, dict) else None
    run.workspace, run.session_id = hook_input.cwd, session_id if isinstance(session_id, str) else None
    state_file = _state_path(env, run.session_id or hook_input.cwd)
    seen = _load(state_file)
    where = gateway.server(env)
    if where is not None:
        from lore.hooks import hosted  # (with the capture side it needs: hosted mode's only)

        run.target = where.origin
        answer, marks = hosted.prompt(
            run, where, {"message": seen.get("message", 0), "task": seen.get("task", 0)}
        )
        text, counts = answer.text, f"{answer.outcome}"
        seen.update(marks)
    else:
        config = load_config(env)
        session = build(WorkspaceSignal(Path(hook_input.cwd), "hook cwd"), config, env, client)
        run.space = session.space
        with gateway.local_port(run, config) as port:
            got = use_case.prompt(
                port,
                session,
                config,
                client,
                use_case.Seen(seen.get("message", 0), seen.get("task", 0)),
                via="hook",
                session_id=run.session_id,
                started=run.started,
                event_key=guard.new_key(),
            )
            port.commit()
        if got.row is not None and got.record is None:
            log.append(client, "record", False, f"not recorded now ({got.failure}): kept in the spool", env)
            run.spool("record", str(got.row.get("event_key")), got.row)
        text, counts = (
            got.text,
            f"space {session.space}: {got.messages} new messages, {got.tasks} new inbox tasks",
        )
        seen.update(message=got.seen.message, task=got.seen.task)
    seen.pop("told", None)  # it works again: a later failure is told again
    _save(state_file, seen)
    elapsed = int((time.monotonic() - run.started) * 1000)
    log.append(client, EVENT, True, f"{counts}, {elapsed} ms", env)
    return shape(text) if text else ""


def _once(run: guard.Run, outcome: Outcome) -> str:
    """On a failure: the line saying what happened, once per session and cause (not before every
    prompt while the database is down)."""
    state_file = _state_path(run.env, run.session_id or run.workspace or "unknown")
    seen = _load(state_file)
    told = f"{outcome.kind}:{outcome.why}"
    if seen.get("told") == told:
        return ""
    seen["told"] = told
    _save(state_file, seen)
    return agent_line(outcome)


def _state_path(env: Mapping[str, str], session: str) -> Path:
    digest = hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()[:32]
    return data_dir(env) / "prompt-hook" / f"{digest}.json"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    kept: dict[str, Any] = {k: v for k, v in data.items() if k in ("message", "task") and isinstance(v, int)}
    if isinstance(data.get("told"), str):
        kept["told"] = data["told"]
    return kept


def _save(path: Path, seen: dict[str, Any]) -> None:
    """Atomic replace; now and then remove the state of long-idle sessions."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w") as handle:
            json.dump(seen, handle)
        os.replace(tmp, path)
    except OSError:
        return
    if int.from_bytes(os.urandom(1), "big") < 8:  # ~3% of runs
        cutoff = time.time() - STATE_TTL
        for old in path.parent.glob("*.json"):
            try:
                if old.stat().st_mtime < cutoff:
                    old.unlink()
            except OSError:
                pass
