"""Where a hook's database is, and the way to it: a server (`LORE_URL`, with `LORE_TOKEN`) or this
machine's database through psql (lore.db.psql.PsqlPort). When the embedded database is not running and
was not stopped by `lore db stop` (a reboot, a crash), the hook starts it and, where the event allows,
waits for it within its time."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Mapping

from lore.core import outcomes, spool
from lore.core.config import Config
from lore.core.errors import HookFailure, LoreError
from lore.db import embedded, locate
from lore.db.psql import PsqlPort
from lore.hooks import credentials
from lore.hooks.credentials import Server as Server
from lore.hooks.guard import Run


def server(env: Mapping[str, str]) -> Server | None:
    """The server the hooks use (hosted mode: `LORE_URL`, else the login `lore login` stored), or None
    (this machine's database). Reading no login costs one failed open(); a stored one, a small read
    (docs/benchmarks.md, "Reading the login")."""
    return credentials.server(env, timeout=1.0)


class Unavailable(HookFailure):
    """The database cannot be used now; the message is lore.core.outcomes' wording of why."""


def local_port(run: Run, config: Config, *, wait: float = 0.0) -> PsqlPort:
    """A psql port on this machine's database, within the run's deadline. An embedded database that
    is down is started (in the background); with `wait` (seconds from the run's start), the run
    waits that long for it to come up before it gives up."""
    url = locate.current(run.env, config.database_url)
    if url is None:
        url = _start(run, wait)
    return PsqlPort(url, deadline=run.until() - 0.02)


def _start(run: Run, wait: float) -> str:
    env = run.env
    if embedded.held(env):
        raise Unavailable(outcomes.DATABASE_HELD)
    if wait <= 0 or not embedded.initialised(env):  # a first start makes a cluster: seconds
        start_in_background(env)
        raise Unavailable(outcomes.DATABASE_STARTING)
    run.allow(wait)
    try:  # here, not in another process: a python start saved is a part of crash recovery's time
        return embedded.start(env, timeout=max(0.5, run.left() - 0.15))
    except LoreError:
        pass  # pg_ctl waits whole seconds only: the server may still come up in what is left
    while run.left() > 0.15:
        url = embedded.running_url(env)
        if url is not None:
            return url
        time.sleep(0.05)
    start_in_background(env)  # whatever became of this start, the next session finds it up
    raise Unavailable(outcomes.DATABASE_STARTING)


def start_in_background(env: Mapping[str, str]) -> None:
    """The embedded database started in a process of its own (it outlives the hook; concurrent starts
    wait on the start lock and find it started). Not `lore db start`, which is the user's and ends a
    `lore db stop`: this start honours one made meanwhile."""
    subprocess.Popen(
        [sys.executable, "-c", "from lore.db import embedded; embedded.start()"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(env),
        start_new_session=True,
    )


def replay(run: Run, config: Config) -> None:
    """Write what the spool keeps for this machine's database, in a psql of its own (a write that
    fails there cannot cost this run its own), while the run has time; never raises."""
    if run.left() < 0.25 or not spool.pending(run.env):
        return
    from lore.service.events import records

    try:
        url = locate.current(run.env, config.database_url)
        if url is None:
            return
        with PsqlPort(url, deadline=run.until() - 0.05) as port:

            def deliver(entry: spool.Entry) -> None:
                records.deliver(port, entry, config.retention_days)

            spool.replay(run.env, spool.LOCAL, deliver, limit=20, until=run.until() - 0.1, commit=port.commit)
    except Exception:  # the spool keeps what was not written; the next run tries again
        return
