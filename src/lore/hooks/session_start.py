"""`lore hook session-start`: the memory, in the client's own output shape, before the first prompt.

Never breaks a session: any failure (no config, ambiguous config, database down, past the soft
deadline) prints nothing and appends the reason to the hook log, which `lore doctor` shows.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from lore.core import clients, injection, render, session_start
from lore.core import hooklog as log
from lore.core.config import Config, load_config
from lore.core.errors import HookFailure, LoreError, RemoteError, StoreError
from lore.core.redact import redact
from lore.core.session import SessionContext, build
from lore.core.workspace import WorkspaceSignal
from lore.db import embedded, snapshot
from lore.hooks import guard


def run(client_name: str, raw: str, env: Mapping[str, str], started: float | None = None) -> str:
    """What to print on stdout: the client's shape around the rendered memory, or '' (nothing)."""
    started = time.monotonic() if started is None else started
    return guard.run(client_name, "session-start", env, started, lambda: _run(client_name, raw, env, started))


def _run(client_name: str, raw: str, env: Mapping[str, str], started: float) -> str:
    adapter = clients.client(client_name)
    hook_input = clients.parse_input(raw)
    if hook_input.source is not None and hook_input.source not in clients.INJECT_ON:
        return ""  # resume / compact: the context already holds the memory
    if not adapter.injects:
        log.append(
            client_name, "session-start", True, "client ignores session-start output; nothing sent", env
        )
        return ""
    if not hook_input.cwd:
        raise HookFailure("hook input has no cwd (nor workspace_roots): cannot tell the workspace")
    if env.get("LORE_URL", "").strip():
        return _run_remote(adapter, client_name, hook_input.cwd, env, started, hook_input.session_id)
    config = load_config(env)
    session = build(WorkspaceSignal(Path(hook_input.cwd), "hook cwd"), config, env, client_name)
    url = env.get("LORE_DATABASE_URL") or config.database_url or embedded.running_url(env)
    if url is None:  # after a reboot: start it now, within the deadline (about 0.3 s here)
        url = _start_database(env, started)
        if url is None and embedded.held(env):
            why = "the embedded database was stopped by `lore db stop`; `lore db start` brings it back"
            return _unavailable(adapter, client_name, env, why)
        if url is None:
            return _unavailable(
                adapter,
                client_name,
                env,
                "the embedded database is not running; lore is starting it, memory arrives from the next "
                "session (`lore service install` starts it at login)",
            )
    remaining = guard.remaining(started, env)
    wanted = session_start.request(session, config, client_name)
    try:
        with snapshot.reading(url, wanted, timeout=max(0.05, remaining - 0.05)) as read:
            out = session_start.compose(read.snapshot, session, config, client_name)
            handoff = f", last session {out.handoff_chars} chars" if out.handoff_chars else ""
            where = f"space {session.space} ({session.resolved.rule})"
            printed = _injected(
                adapter, client_name, env, started, where, out.text, out.shown, out.omitted, handoff
            )
            _record(read, out, session, config, client_name, hook_input.session_id, env, started)
    except StoreError as exc:  # the read itself (the record's own failures never come here)
        return _unavailable(adapter, client_name, env, f"the database did not answer ({exc.message})")
    return printed


def _record(
    read: snapshot.Reading,
    out: render.Rendered,
    session: SessionContext,
    config: Config,
    client_name: str,
    session_id: str | None,
    env: Mapping[str, str],
    started: float,
) -> None:
    """The record of what was injected (`lore log`), by the psql that read it. Never fails or holds
    the hook past its deadline: a record that cannot be written is a line in the hook log."""
    left = guard.remaining(started, env) - 0.05
    if not out.text:
        return
    if left <= 0.01:
        log.append(client_name, "record", False, "injection not recorded: the soft deadline is near", env)
        return
    budget = render.clamp_budget(config.session_start_max_chars, client_name)
    row = injection.session_start_row(
        read.snapshot,
        out,
        session,
        client_name,
        via="hook",
        session_id=session_id,
        budget=budget,
        duration_ms=int((time.monotonic() - started) * 1000),
    )
    try:
        read.record(row, config.retention_days, timeout=left)
    except (LoreError, ValueError, OSError) as exc:
        reason = exc.message if isinstance(exc, LoreError) else str(exc)
        log.append(client_name, "record", False, f"injection not recorded: {reason}", env)


def _injected(
    adapter: clients.ClientHook,
    client_name: str,
    env: Mapping[str, str],
    started: float,
    where: str,
    text: str,
    shown: int,
    omitted: int,
    extra: str = "",
) -> str:
    """What the hook prints (the client's shape around `text`), with its line in the hook log."""
    elapsed = int((time.monotonic() - started) * 1000)
    detail = (
        f"{where}: {render.counted(shown, 'fact')} shown, {omitted} cut"
        f"{extra}, {render.size(text)} chars, {elapsed} ms"
    )
    log.append(client_name, "session-start", True, detail, env)
    return adapter.shape(text) if text else ""


def _run_remote(
    adapter: clients.ClientHook,
    client_name: str,
    cwd: str,
    env: Mapping[str, str],
    started: float,
    session_id: str | None,
) -> str:
    """Hosted mode: the server resolves the space and renders; same deadline, budget and silence."""
    from lore.hooks import remote

    remaining = guard.remaining(started, env)
    try:
        got = remote.fetch(
            env["LORE_URL"].strip(),
            env.get("LORE_TOKEN", "").strip(),
            cwd,
            client_name,
            timeout=max(0.05, remaining - 0.05),
            session_id=session_id,  # the server records the injection under the client's session
        )
    except RemoteError as exc:
        raise HookFailure(f"{exc} (LORE_URL {redact(env['LORE_URL'].strip())})") from None
    where = f"space {got.space} (from {redact(env['LORE_URL'].strip())})"
    return _injected(adapter, client_name, env, started, where, got.text, got.shown, got.omitted)


def _start_database(env: Mapping[str, str], started: float) -> str | None:
    """The embedded server started now when its cluster exists and the deadline leaves time (pg_ctl
    waits for it; the soft deadline's alarm bounds it); else started in the background. Its URL, or
    None when the session must go without."""
    if embedded.held(env):
        return None
    if not embedded.initialised(env) or guard.remaining(started, env) < 0.4:
        _start_database_in_background()
        return None
    try:
        return embedded.start(env, timeout=2)
    except (LoreError, HookFailure):
        return None


def _unavailable(adapter: clients.ClientHook, client_name: str, env: Mapping[str, str], why: str) -> str:
    """One line for the agent instead of the memory (a memory that silently never arrives is the
    failure lore exists to prevent), and the reason in the hook log."""
    log.append(client_name, "session-start", False, f"memory unavailable: {why}", env)
    return adapter.shape(
        f"lore: the shared memory is unavailable in this session: {why}. `lore doctor` says more."
    )


def _start_database_in_background() -> None:
    subprocess.Popen(
        [sys.executable, "-m", "lore.cli.main", "db", "start"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
