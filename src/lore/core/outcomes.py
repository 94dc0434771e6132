"""What happened when a hook ran, in one wording per cause (docs/design.md, Agent events): the line the
agent reads, the record `lore log` lists, the hook log's line and what `lore doctor` and the CLI say
all come from here. Pure.

Kinds (the record's `outcome`):
  shown        memory (or the inbox) was shown
  nothing      nothing to show (an empty space; no new message)
  unavailable  the database or the server could not be reached, or is starting
  config       the config file is missing a space for here, or is invalid
  tie          two spaces match the workspace equally well
  deadline     the hook ran out of its soft deadline
  spooled      a write kept on this machine, written when the database answers again
  killed       a hook that started and never ended: its agent stopped it (found by the next one)
  stored       the session end's handoff was written
  failed       anything else (a bug: the hook log has the exception)
"""

from __future__ import annotations

from dataclasses import dataclass

from lore.core.errors import (
    AmbiguousSpace,
    ConfigError,
    DeadlinePassed,
    LoreError,
    RemoteError,
    SpaceError,
    StoreError,
)

KINDS = (
    "shown",
    "nothing",
    "unavailable",
    "config",
    "tie",
    "deadline",
    "spooled",
    "killed",
    "stored",
    "failed",
)


@dataclass(frozen=True)
class Outcome:
    kind: str
    why: str = ""  # the cause and the next action, one sentence ('' when shown or stored)


# --- the causes ------------------------------------------------------------------------------------

# One wording per cause: the hooks' line, the CLI's errors and `lore doctor` all say these.
HELD = "The embedded database was stopped by `lore db stop`."
HELD_HINT = "Run `lore db start` to use the memory again; lore reconnects by itself."
DATABASE_HELD = "the embedded database was stopped by `lore db stop`; `lore db start` brings it back"
NOT_RUNNING = (
    "Not running: a session or any `lore` command starts it (`lore db start` now; `lore service install` "
    "at each login)."
)
DATABASE_STARTING = (
    "the embedded database is starting (it was stopped by a reboot or a crash, not by `lore db stop`); "
    "memory arrives as soon as it is up, `lore doctor` shows its state"
)
SCHEMA_OLDER = (
    "the database's schema is older than this lore: run any `lore` command (`lore doctor`) to upgrade it"
)


def database_unreachable(detail: str) -> str:
    return f"the database did not answer ({detail}); `lore doctor` checks it"


def server_unreachable(detail: str) -> str:
    return f"the lore server did not answer ({detail}); `lore doctor` checks it"


def deadline(seconds: float) -> str:
    return (
        f"lore did not finish within its {seconds:g} s deadline; `lore doctor` shows the hook's timings "
        "(LORE_HOOK_DEADLINE moves it)"
    )


def killed(event: str, client: str, started: str) -> str:
    return (
        f"the {event} hook of {client} that started at {started} never finished: its agent stopped it "
        "(a hook timeout shorter than lore's deadline?); `lore doctor` lists such runs"
    )


def spooled(what: str) -> str:
    return f"{what} kept on this machine and written when the database answers again (`lore doctor` shows it)"


def of_error(exc: BaseException) -> Outcome:
    """The outcome a failure stands for, with its wording (the error's message and hint)."""
    if isinstance(exc, AmbiguousSpace):
        return Outcome("tie", _said(exc))
    if isinstance(exc, ConfigError | SpaceError):
        return Outcome("config", _said(exc))
    if isinstance(exc, DeadlinePassed):
        return Outcome("deadline", exc.message)
    if isinstance(exc, RemoteError):
        return Outcome("unavailable", server_unreachable(exc.message))
    if isinstance(exc, StoreError):
        return Outcome(
            "unavailable", SCHEMA_OLDER if _older_schema(exc) else database_unreachable(exc.message)
        )
    if isinstance(exc, LoreError):
        return Outcome("unavailable", _said(exc))
    return Outcome(
        "failed", f"unexpected {type(exc).__name__}: {exc}; the hook log has it, `lore doctor` shows it"
    )


def _said(exc: LoreError) -> str:
    message = exc.message.rstrip(". ")
    return f"{message}; {exc.hint.rstrip('. ')}" if exc.hint else message


def _older_schema(exc: StoreError) -> bool:
    text = exc.message
    return "lore_" in text and "does not exist" in text


# --- what the agent reads ------------------------------------------------------------------------


def agent_line(outcome: Outcome, *, space: str | None = None) -> str:
    """The one line an agent reads when a hook showed no memory: what happened and what to do."""
    if outcome.kind == "nothing":
        where = f" in space {space}" if space else ""
        return (
            f"lore: no memory stored{where} yet. lore is the memory your coding agents share: "
            "remember_fact stores what the next session here should know."
        )
    if outcome.kind == "spooled":
        return f"lore: {outcome.why}."
    return f"lore: the shared memory is unavailable in this session: {outcome.why}."
