"""`lore hook session-start|prompt|session-end --client C`: thin; all logic in lore.hooks. Always
exits 0."""

from __future__ import annotations

import os
import sys
import time


def run(event: str, client: str, started: float | None = None) -> int:
    started = time.monotonic() if started is None else started
    raw = sys.stdin.read() if not sys.stdin.isatty() else ""
    text: str | None
    if event == "prompt":
        from lore.hooks import prompt

        text = prompt.run(client, raw, os.environ, started)
    elif event == "session-end":
        from lore.hooks import session_end

        text = session_end.run(client, raw, os.environ, started)
    else:
        from lore.hooks import deadline, quick

        text = quick.run(client, raw, os.environ, started, started + deadline.deadline(os.environ))
        if text is None:  # not kept, or something changed: compose it
            from lore.hooks import session_start

            text = session_start.run(client, raw, os.environ, started)
    if text:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0
