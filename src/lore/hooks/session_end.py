"""`lore hook session-end --client C`: store what the session leaves behind (docs/design.md, Handoffs).

Wired to each client's end-of-turn or end-of-session event (docs/agents/): Claude Code's `Stop` and
`SessionEnd`, Gemini CLI's `AfterAgent` and `SessionEnd`, Codex's `Stop` and `SessionEnd`, Cursor's
`afterAgentResponse`, lore's OpenCode plugin on `session.idle`. One handoff per session: every later
event of the same session updates it. It holds the agent's final message (from the event, else read
from the transcript the event names), the working tree's changes at that moment (git) and the tasks
the session touched, bounded and with credentials redacted (lore.capture); no model, no embedding.

Same rules as the other hooks: psql and the standard library only, within the soft deadline, and
a failure prints nothing and goes to the hook log. The hook prints nothing on success either.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path

from lore.core import capture, clients
from lore.core import hooklog as log
from lore.core.config import load_config
from lore.core.errors import HookFailure
from lore.core.rows import Handoff, from_json
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal
from lore.db import embedded, psql
from lore.hooks import guard

EVENT = "session-end"

# The handoff travels in the script (stdin), never in psql's arguments, which other local users can
# read (/proc/PID/cmdline): a dollar-quoted literal under a tag the text does not contain.
_SQL = r"""
\set ON_ERROR_STOP on
BEGIN;
SET LOCAL statement_timeout = :timeout_ms;
SELECT row_to_json(h) FROM lore_handoff_record({payload}::jsonb) h;
COMMIT;
"""


def run(client_name: str, raw: str, env: Mapping[str, str], started: float | None = None) -> str:
    """Always '' (the clients read nothing from this hook); the outcome goes to the hook log."""
    started = time.monotonic() if started is None else started
    return guard.run(client_name, EVENT, env, started, lambda: _run(client_name, raw, env, started))


def _run(client_name: str, raw: str, env: Mapping[str, str], started: float) -> str:
    clients.client(client_name)  # an unknown name: ValueError listing the known ones
    end = clients.parse_end(raw)
    if env.get("LORE_URL", "").strip():
        log.append(client_name, EVENT, True, "hosted mode (LORE_URL): handoffs are not stored yet", env)
        return ""
    if not end.cwd:
        raise HookFailure("hook input has no cwd (nor workspace_roots): cannot tell the workspace")
    if not end.session_id:
        raise HookFailure("hook input names no session (session_id): cannot tell which handoff to update")
    config = load_config(env)
    session = build(WorkspaceSignal(Path(end.cwd), "hook cwd"), config, env, client_name)
    url = env.get("LORE_DATABASE_URL") or config.database_url or embedded.running_url(env)
    if url is None:
        raise HookFailure("the embedded database is not running (`lore db start` starts it): no handoff")
    # git runs while the transcript is read; at most GIT_TIMEOUT, leaving time for the write.
    git_time = min(capture.GIT_TIMEOUT, max(0.05, guard.remaining(started, env) - 0.25))
    message = end.message
    from_transcript = message is None and end.transcript is not None
    if from_transcript:
        message = capture.last_message(end.transcript)
    began = capture.parse_time(end.started_at) or capture.transcript_started(end.transcript)
    changes = capture.git_changes(session.root, env, git_time) if (session.root / ".git").exists() else None
    text, chars = capture.bound_message(message)
    handoff = capture.Handoff(
        space=session.space,
        client=client_name,
        session_id=capture.clean(end.session_id)[:200],
        root=str(session.root),
        workspace=str(session.signal.path),
        workspace_name=session.workspace_name,
        event=end.event,
        message=text,
        message_chars=chars,
        changes=changes,
        started_at=began,
    )
    document = json.dumps(handoff.payload(), ensure_ascii=False)
    tag = f"$h{os.urandom(8).hex()}$"
    while tag in document:  # 64 random bits: practically never
        tag = f"$h{os.urandom(8).hex()}$"
    script = _SQL.replace("{payload}", f"{tag}{document}{tag}")
    remaining = guard.remaining(started, env)
    saved = from_json(Handoff, psql.psql_json(url, script, {}, timeout=max(0.05, remaining - 0.05)))
    elapsed = int((time.monotonic() - started) * 1000)
    said = f"message {chars} chars{' (from the transcript)' if from_transcript and text else ''}"
    if text is None:
        said = "no final message"
    git = "no git" if changes is None else f"{changes.count} changed"
    detail = (
        f"space {session.space}: handoff {saved.note_id} of session {saved.session_id[:12]} ({end.event}, "
        f"{said}, {git}, {len(saved.tasks)} tasks, update {saved.events}), {elapsed} ms"
    )
    log.append(client_name, EVENT, True, detail, env)
    return ""
