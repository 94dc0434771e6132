"""The one LISTEN connection the waiting senders of a process share (lore.store.replies), and how
often waiting looks at the tables anyway (`LORE_POLL_SECONDS`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lore.service import metrics
from lore.store.replies import Replies, Run

# The backstop of LISTEN: how often waiting for replies (and `lore listen`) looks at the tables
# anyway; without LISTEN (a transaction pooler and no listen URL) the poll is all there is.
POLL_SECONDS = 5.0
POLL_ALONE_SECONDS = 1.0


def replies(env: Mapping[str, str], listen_url: Callable[[], str | None], run: Run) -> Replies:
    """The replies listener of a process: LISTEN at `listen_url()` (asked when it starts), the poll
    through `run`, the waits capped per user (`LORE_USER_MAX_WAITS`) and in all (`LORE_MAX_WAITS`)."""
    return Replies(
        listen_url,
        run,
        per_user=int(env.get("LORE_USER_MAX_WAITS", "16")),
        total=int(env.get("LORE_MAX_WAITS", "1000")),
        poll_seconds=poll_seconds(env),
        poll_alone_seconds=poll_seconds(env, listening=False),
        on_event=metrics.listen_event,
    )


def poll_seconds(env: Mapping[str, str], listening: bool = True) -> float:
    """How often a process waiting for replies (and `lore listen`) looks at the tables whatever LISTEN
    says: `LORE_POLL_SECONDS` (0.2 to 60), else 5 s beside LISTEN (the backstop for a notification
    that never came) and 1 s without it (the poll is all there is)."""
    default = POLL_SECONDS if listening else POLL_ALONE_SECONDS
    try:
        value = float(env.get("LORE_POLL_SECONDS", "") or default)
    except ValueError:
        value = default
    return min(60.0, max(0.2, value))
