"""What every hook shares: the soft deadline, and failing open. A hook never breaks a session: any
failure prints nothing and appends one line with the reason to the hook log (`lore doctor`)."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Mapping
from types import FrameType

from lore import hooklog as log
from lore.errors import HookFailure, LoreError

# Claude Code kills a hook at its timeout (5 s in our hooks.json); we give up well before.
SOFT_DEADLINE = 0.9


def remaining(started: float) -> float:
    return SOFT_DEADLINE - (time.monotonic() - started)


def _on_deadline(signum: int, frame: FrameType | None) -> None:
    raise HookFailure(f"soft deadline of {SOFT_DEADLINE}s passed")


def run(client: str, event: str, env: Mapping[str, str], started: float, body: Callable[[], str]) -> str:
    """`body()`'s output, or '' when it failed or ran past the soft deadline (logged)."""
    previous = signal.signal(signal.SIGALRM, _on_deadline)
    signal.setitimer(signal.ITIMER_REAL, max(0.05, remaining(started)))
    try:
        return body()
    except (LoreError, ValueError, OSError) as exc:  # HookFailure is a LoreError
        reason = exc.message if isinstance(exc, LoreError) else str(exc)
        log.append(client, event, False, f"{type(exc).__name__}: {reason}", env)
        return ""
    except Exception as exc:  # never break a session, whatever happened
        log.append(client, event, False, f"unexpected {type(exc).__name__}: {exc}", env)
        return ""
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
