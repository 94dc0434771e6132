"""`lore hook session-end --client C`: store what the session leaves behind (docs/design.md, Handoffs).

Wired to each client's end-of-turn or end-of-session event (docs/agents/): Claude Code's `Stop` and
`SessionEnd`, Gemini CLI's `AfterAgent` and `SessionEnd`, Codex's `Stop` and `SessionEnd`, Cursor's
`afterAgentResponse`, lore's OpenCode plugin on `session.idle`. One handoff per session: every later
event of the same session updates it.

An adapter: what only this machine can see is captured here (the agent's final message, from the
event or its transcript; the working tree's changes; lore.core.capture: bounded, credentials
redacted before anything leaves), and the handoff is written by the use case
(lore.service.events.session_end), through psql, or on the server (`POST /api/hooks/session-end`) in
hosted mode. When neither can take it (stopped, starting, unreachable), it waits in the spool and
is written by the next lore process that can. The hook prints nothing (the clients read nothing).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from lore.core import capture, clients, outcomes
from lore.core import hooklog as log
from lore.core.config import load_config
from lore.core.ending import Ending
from lore.core.errors import HookFailure
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal
from lore.hooks import gateway, guard, hosted
from lore.service.events import session_end as use_case

EVENT = "session-end"


def run(client_name: str, raw: str, env: Mapping[str, str], started: float | None = None) -> str:
    """Always '' (the clients read nothing from this hook); the outcome goes to the hook log."""
    started = time.monotonic() if started is None else started
    try:
        clients.client(client_name)
    except ValueError as exc:  # an unknown name: the message lists the known ones
        log.append(client_name, EVENT, False, str(exc), env)
        return ""
    return guard.run(client_name, EVENT, env, started, lambda r: _run(r, raw))


def _run(run: guard.Run, raw: str) -> str:
    env, client = run.env, run.client
    end = clients.parse_end(raw)
    if not end.cwd:
        raise HookFailure("the agent's hook input names no directory (cwd): lore cannot tell the workspace")
    if not end.session_id:
        raise HookFailure("the agent's hook input names no session (session_id): no handoff to update")
    run.workspace, run.session_id = end.cwd, end.session_id
    where = gateway.server(env)
    config = None if where is not None else load_config(env)
    session = None
    if config is not None:
        session = build(WorkspaceSignal(Path(end.cwd), "hook cwd"), config, env, client)
        run.space = session.space
    root = session.root if session is not None else Path(hosted.where(end.cwd)["root"])
    ending = _capture(run, end, root)
    if where is not None:
        run.target = where.origin
        try:
            saved = hosted.session_end(run, where, ending)
        except HookFailure as exc:
            return _spooled(
                run, "handoff", {**hosted.where(end.cwd), "client": client, "ending": ending.wire()}, exc
            )
        detail = f"stored: handoff {saved.get('note_id')} in space {saved.get('space')} on the server"
        hosted.replay(run, where)
    else:
        assert config is not None and session is not None
        handoff = use_case.handoff_of(ending, session)
        try:
            with gateway.local_port(run, config) as port:
                row = use_case.store(port, handoff.payload())
                port.commit()
        except HookFailure as exc:
            return _spooled(run, "handoff", handoff.payload(), exc)
        gateway.replay(run, config)
        said = _said(ending, from_transcript=end.message is None and end.transcript is not None)
        detail = (
            f"stored: space {session.space}, handoff {row.note_id} of session {row.session_id[:12]} "
            f"({ending.event}, {said}, update {row.events})"
        )
    elapsed = int((time.monotonic() - run.started) * 1000)
    log.append(client, EVENT, True, f"{detail}, {elapsed} ms", env)
    return ""


def _capture(run: guard.Run, end: clients.EndInput, root: Path) -> Ending:
    """What only this machine can see, bounded and redacted: git runs while the transcript is read,
    for at most GIT_TIMEOUT, leaving time for the write."""
    git_time = min(capture.GIT_TIMEOUT, max(0.05, run.left() - 0.3))
    message = end.message
    if message is None and end.transcript is not None:
        message = capture.last_message(end.transcript)
    began = capture.parse_time(end.started_at) or capture.transcript_started(end.transcript)
    changes = capture.git_changes(root, run.env, git_time) if (root / ".git").exists() else None
    text, chars = capture.bound_message(message)
    return Ending(
        client=run.client,
        session_id=capture.clean(end.session_id or "")[:200],
        event=end.event,
        message=text,
        message_chars=chars,
        changes=changes,
        started_at=began,
        at=datetime.now(UTC),
    )


def _spooled(run: guard.Run, kind: str, payload: dict[str, object], exc: HookFailure) -> str:
    """The handoff could not be written now: kept for the next lore process that can write it."""
    why = outcomes.of_error(exc).why
    key = f"handoff:{run.client}:{run.session_id}:{time.time_ns()}"
    if run.spool(kind, key, payload):
        outcome = outcomes.Outcome("spooled", outcomes.spooled(f"the handoff ({why})"))
        log.append(run.client, EVENT, False, f"spooled: {outcome.why}", run.env)
        run.record_outcome(outcome)
    return ""


def _said(ending: Ending, *, from_transcript: bool) -> str:
    git = "no git" if ending.changes is None else f"{ending.changes.count} changed"
    if ending.message is None:
        return f"no final message, {git}"
    where = " (from the transcript)" if from_transcript else ""
    return f"message {ending.message_chars} chars{where}, {git}"
