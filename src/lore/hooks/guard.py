"""What every hook shares: the soft deadline, and failing open. A hook never breaks a session: any
failure prints nothing and appends one line with the reason to the hook log (`lore doctor`)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Mapping
from types import FrameType

from lore.core import hooklog as log
from lore.core.errors import HookFailure, LoreError

# Claude Code kills a hook at its timeout (5 s in our hooks.json); we give up well before.
DEFAULT_DEADLINE = 0.9
# LORE_HOOK_DEADLINE moves it, within these bounds, for a slow machine or a distant database.
DEADLINE_RANGE = (0.2, 3.0)


def deadline(env: Mapping[str, str]) -> float:
    """The soft deadline in seconds: LORE_HOOK_DEADLINE if it is a number (held inside
    DEADLINE_RANGE), else 0.9. A hook never fails on its own settings: anything else is 0.9."""
    raw = env.get("LORE_HOOK_DEADLINE", "").strip()
    try:
        value = float(raw) if raw else DEFAULT_DEADLINE
    except ValueError:
        return DEFAULT_DEADLINE
    if value != value:  # NaN
        return DEFAULT_DEADLINE
    return min(max(value, DEADLINE_RANGE[0]), DEADLINE_RANGE[1])


def remaining(started: float, env: Mapping[str, str]) -> float:
    """Seconds left of the soft deadline of a hook that started at `started` (time.monotonic)."""
    return deadline(env) - (time.monotonic() - started)


def run(client: str, event: str, env: Mapping[str, str], started: float, body: Callable[[], str]) -> str:
    """`body()`'s output, or '' when it failed or ran past the soft deadline (logged).

    The deadline is disarmed as soon as `body` ends, before anything is logged: an alarm that
    went off while a failure was being written to the hook log escaped the handler (exit 1 and a
    line on stderr, seen under load), which is exactly what a hook must never do."""
    seconds = deadline(env)

    def on_deadline(signum: int, frame: FrameType | None) -> None:
        raise HookFailure(f"soft deadline of {seconds}s passed")

    previous = signal.signal(signal.SIGALRM, on_deadline)
    try:
        try:
            signal.setitimer(signal.ITIMER_REAL, max(0.05, remaining(started, env)))
            return body()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except (LoreError, ValueError, OSError) as exc:  # HookFailure is a LoreError
        reason = exc.message if isinstance(exc, LoreError) else str(exc)
        log.append(client, event, False, f"{type(exc).__name__}: {reason}", env)
        return ""
    except Exception as exc:  # never break a session, whatever happened
        log.append(client, event, False, f"unexpected {type(exc).__name__}: {exc}", env)
        return ""
    finally:
        signal.signal(signal.SIGALRM, previous)
