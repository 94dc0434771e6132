"""What every hook shares: the soft deadline, the marker that finds runs its agent killed, and failing
open. A hook never breaks a session: every failure is an outcome (lore.core.outcomes) with one line in
the hook log, one record (kept in the spool until a database takes it) and, where the agent reads the
hook, one line for the agent (`tell`)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType

from lore.core import hooklog as log
from lore.core import hookruns, login, outcomes, spool
from lore.core.errors import DeadlinePassed
from lore.core.outcomes import Outcome
from lore.hooks.deadline import DEADLINE_RANGE, DEFAULT_DEADLINE, deadline
from lore.service.events import records

__all__ = [
    "DEADLINE_RANGE",
    "DEFAULT_DEADLINE",
    "START_WAIT",
    "Run",
    "deadline",
    "new_key",
    "run",
]

# How long a session start may wait for the embedded database to come up (after a reboot or a
# crash: recovery under a busy writer took 2-3 s here) when it has no earlier text to show: inside
# the 5 s hook timeout lore installs, with room for the interpreter and the answer.
START_WAIT = 4.2


@dataclass
class Run:
    """One hook run: who, which event, since when, and what the body learned of where it is (for the
    record of a failure). `target` is where its writes go: spool.LOCAL or the server's origin."""

    client: str
    event: str
    env: Mapping[str, str]
    started: float
    target: str = spool.LOCAL
    workspace: str = ""
    session_id: str | None = None
    space: str | None = None
    allowed: float = field(default=0.0)  # seconds from `started` the run may take (the deadline)

    def until(self) -> float:
        """The time.monotonic() by which the run must be done."""
        return self.started + self.allowed

    def left(self) -> float:
        return self.until() - time.monotonic()

    def allow(self, seconds: float) -> None:
        """Let the run take up to `seconds` from its start (a wait for the database to come up)."""
        if seconds > self.allowed:
            self.allowed = seconds
            signal.setitimer(signal.ITIMER_REAL, max(0.05, self.left()))

    def spool(self, kind: str, key: str, payload: Mapping[str, object]) -> bool:
        """Keep a write for the next lore process that can make it; False when the spool is full."""
        kept = spool.add(self.env, kind, self.target, key, dict(payload)) is not None
        if not kept:
            log.append(
                self.client, self.event, False, f"spool full or unwritable: {kind} {key} lost", self.env
            )
        return kept

    def record_outcome(self, outcome: Outcome, text: str = "") -> None:
        """The record of an outcome that could not go to a database: into the spool."""
        row = records.outcome_row(
            self.event,
            outcome,
            client=self.client,
            workspace=self.workspace,
            session_id=self.session_id,
            space=self.space,
            text=text,
            duration_ms=int((time.monotonic() - self.started) * 1000),
            event_key=new_key(),
            at=_now_iso(),
        )
        self.spool("record", str(row["event_key"]), row)


def _target(env: Mapping[str, str]) -> str:
    """Where this run's writes go: the server's origin in hosted mode (LORE_URL, else the login `lore
    login` stored), else this machine. Never raises: an unusable login file fails the body later."""
    url = env.get("LORE_URL", "").strip()
    if not url:
        try:
            stored = login.read(env)
        except Exception:
            return spool.LOCAL
        if stored is None:
            return spool.LOCAL
        url = stored.url
    return login.origin(url)


def new_key() -> str:
    """A record's idempotency key: written twice (spooled, then replayed), it is one record."""
    return os.urandom(16).hex()


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def run(
    client: str,
    event: str,
    env: Mapping[str, str],
    started: float,
    body: Callable[[Run], str],
    tell: Callable[[Run, Outcome], str] = lambda run, outcome: "",
    shape: Callable[[str], str] = lambda text: text,
) -> str:
    """`body(run)`'s output; on any failure (the deadline included) the outcome is logged, recorded
    (spooled) with the text `tell(run, outcome)` gives the agent, and that text is printed instead,
    in the client's `shape` ('' prints nothing).

    The deadline is disarmed as soon as `body` ends, before anything is logged: an alarm that
    went off while a failure was being written to the hook log escaped the handler (exit 1 and a
    line on stderr, seen under load), which is exactly what a hook must never do."""
    current = Run(client, event, env, started, target=_target(env), allowed=deadline(env))
    marker = hookruns.begin(env, event, client)
    _report_killed(current)

    def on_deadline(signum: int, frame: FrameType | None) -> None:
        raise DeadlinePassed(outcomes.deadline(current.allowed))

    previous = signal.signal(signal.SIGALRM, on_deadline)
    try:
        try:
            try:
                signal.setitimer(signal.ITIMER_REAL, max(0.05, current.left()))
                return body(current)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except Exception as exc:  # never break a session, whatever happened
            outcome = outcomes.of_error(exc)
            log.append(client, event, False, f"{outcome.kind}: {outcome.why}", env)
            said = _told(current, outcome, tell)
            current.record_outcome(outcome, said)
            return shape(said) if said else ""
    finally:
        signal.signal(signal.SIGALRM, previous)
        hookruns.end(marker)


def _told(current: Run, outcome: Outcome, tell: Callable[[Run, Outcome], str]) -> str:
    try:
        return tell(current, outcome)
    except Exception as exc:  # the fallback itself must not break the session either
        log.append(current.client, current.event, False, f"failed: {type(exc).__name__}: {exc}", current.env)
        return ""


def _report_killed(current: Run) -> None:
    """Runs that started and never ended (their agent stopped them): logged and recorded, once."""
    for gone in hookruns.abandoned(current.env):
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(gone.started))
        outcome = Outcome("killed", outcomes.killed(gone.event, gone.client, when))
        log.append(gone.client, gone.event, False, f"killed: {outcome.why}", current.env)
        row = records.outcome_row(
            gone.event,
            outcome,
            client=gone.client,
            workspace="",
            event_key=new_key(),
            at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(gone.started)),
        )
        current.spool("record", str(row["event_key"]), row)
