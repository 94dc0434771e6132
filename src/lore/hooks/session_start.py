"""`lore hook session-start`: the memory, in the client's own output shape, before the first prompt.

An adapter: the text is composed and recorded by the use case (lore.service.events.session_start),
here through psql, or on the server (`POST /api/hooks/session-start`) in hosted mode. Never breaks a
session, never leaves it without a word: every outcome is one line the agent reads (lore.core.outcomes)
and one record; when the database cannot answer (starting after a crash, unreachable), the agent reads
the last text this workspace was shown, marked with its age (lore.core.lastgood), or, with none kept,
the hook waits for the embedded database to come up within the client's hook timeout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from lore.core import clients, lastgood, login, probes
from lore.core import hooklog as log
from lore.core.config import config_path, load_config
from lore.core.errors import HookFailure
from lore.core.outcomes import Outcome, agent_line
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal
from lore.db import embedded, psql
from lore.hooks import gateway, guard, quick
from lore.service.events import session_start as use_case

EVENT = "session-start"


def run(client_name: str, raw: str, env: Mapping[str, str], started: float | None = None) -> str:
    """What to print on stdout: the client's shape around the memory (or the line saying why there
    is none)."""
    started = time.monotonic() if started is None else started
    try:
        adapter = clients.client(client_name)
    except ValueError as exc:  # an unknown name: the message lists the known ones
        log.append(client_name, EVENT, False, str(exc), env)
        return ""
    return guard.run(client_name, EVENT, env, started, lambda r: _run(r, adapter, raw), _told, adapter.shape)


def _run(run: guard.Run, adapter: clients.ClientHook, raw: str) -> str:
    env, client = run.env, run.client
    hook_input = clients.parse_input(raw)
    if hook_input.source is not None and hook_input.source not in clients.INJECT_ON:
        return ""  # resume / compact: the context already holds the memory
    if not adapter.injects:
        log.append(client, EVENT, True, "client ignores session-start output; nothing sent", env)
        return ""
    if not hook_input.cwd:
        raise HookFailure("the agent's hook input names no directory (cwd): lore cannot tell the workspace")
    run.workspace, run.session_id = hook_input.cwd, hook_input.session_id
    where = gateway.server(env)
    said = _hosted(run, where) if where is not None else _local(run, hook_input.cwd, adapter)
    if said.kind == "shown" and not said.kept:
        lastgood.save(env, client, hook_input.cwd, said.text, said.space, target=run.target)
    elapsed = int((time.monotonic() - run.started) * 1000)
    log.append(client, EVENT, True, f"{said.kind}: {said.summary}, {len(said.text)} chars, {elapsed} ms", env)
    return adapter.shape(said.text) if said.text else ""


@dataclass(frozen=True)
class Said:
    text: str
    kind: str  # the outcome
    space: str
    summary: str  # for the hook log
    kept: bool = False  # kept already, with what the fast path needs


def _hosted(run: guard.Run, where: gateway.Server) -> Said:
    from lore.hooks import hosted  # (with the capture side it needs: hosted mode's only)

    run.target = where.origin
    answer = hosted.session_start(run, where)
    facts = f"{answer.shown} fact{'' if answer.shown == 1 else 's'} shown"
    summary = f"space {answer.space} (from {where.origin}): {facts}"
    return Said(answer.text, answer.outcome, answer.space, summary)


def _local(run: guard.Run, cwd: str, adapter: clients.ClientHook) -> Said:
    env, client = run.env, run.client
    with probes.recording() as seen:
        path = config_path(env)
        probes.look("stat", str(path))  # before it is read: an edit while it is read moves it again
        config = load_config(env, path)
        probes.look("exists", str(login.path(env)))  # a `lore login` made later sends this hook to the server
        session = build(WorkspaceSignal(Path(cwd), "hook cwd"), config, env, client)
        run.space = session.space
        wait = 0.0 if lastgood.load(env, client, cwd) else guard.START_WAIT
        with gateway.local_port(run, config, wait=wait) as port:
            got = use_case.session_start(
                port,
                session,
                config,
                client,
                via="hook",
                session_id=run.session_id,
                started=run.started,
                event_key=guard.new_key(),
            )
            if got.record is not None:  # else psql ended with the failed call: nothing to commit
                try:
                    port.commit()
                except HookFailure as exc:
                    got = replace(got, record=None, failure=exc.message)
    if got.record is None:
        log.append(client, "record", False, f"not recorded now ({got.failure}): kept in the spool", env)
        run.spool("record", str(got.row.get("event_key")), got.row)
    gateway.replay(run, config)
    out = got.rendered
    handoff = f", last session {out.handoff_chars} chars" if out.handoff_chars else ""
    counts = f"{out.shown} fact{'' if out.shown == 1 else 's'} shown, {out.omitted} cut{handoff}"
    summary = f"space {session.space} ({session.resolved.rule}): {counts}"
    if got.record is not None and got.quiet and not psql.has_password(port.url):
        quick.keep(
            env,
            client,
            cwd,
            text=got.text,
            shaped=adapter.shape(got.text),
            space=session.space,
            summary=summary,
            row=got.row,
            spaces=list(session.readable),
            stamp=got.stamp,
            until=got.valid_until.timestamp() if got.valid_until else None,
            url=port.url,
            psql=str(embedded.bin_dir() / "psql"),
            retention=config.retention_days,
            seen=[*seen, *_code_probes()],
        )
        return Said(got.text, got.outcome.kind, session.space, summary, kept=True)
    return Said(got.text, got.outcome.kind, session.space, summary)


def _code_probes() -> list[probes.Probe]:
    """lore's own files that shape the text (loaded by now): a changed lore composes anew."""
    names = [*sorted(n for n in sys.modules if n.startswith("lore.core.")), use_case.__name__]
    files = [getattr(sys.modules.get(name), "__file__", None) for name in names]
    return [("stat", f, probes.ask("stat", f)) for f in files if f]


def _told(run: guard.Run, outcome: Outcome) -> str:
    """On a failure: the last text this workspace was shown, marked, when the database or the server
    could not answer; else the one line saying what happened."""
    kept = lastgood.load(run.env, run.client, run.workspace, run.target) if run.workspace else None
    if kept is not None and outcome.kind in ("unavailable", "deadline"):
        return lastgood.marked(kept, outcome.why)
    return agent_line(outcome)
