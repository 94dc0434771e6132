"""What `lore doctor` says of the hooks' own state on this machine: the spool (writes kept while the
database or the server could not take them: one that does not drain is a problem) and runs that an
agent stopped before they ended. Wording from lore.core.outcomes, as the hooks say it."""

from __future__ import annotations

import os
import time

from lore.core import hookruns, lastgood, spool

# A spool whose oldest write is older than this is not draining (a lore process that can write
# replays it at once: a hook, `lore mcp`, any command).
STUCK_SECONDS = 600


def check(lines: list[tuple[str, str]]) -> None:
    env = os.environ
    waiting = spool.pending(env)
    gave_up = spool.failed(env)
    where = spool.folder(env)
    if waiting:
        oldest = min(_made(p) for p in waiting)
        age = lastgood.age(time.time() - oldest)
        stuck = time.time() - oldest > STUCK_SECONDS
        lines.append(
            (
                "WARN" if stuck else "OK",
                f"spool: {len(waiting)} hook writes wait in {where}, the oldest for {age}"
                + (
                    " → it does not drain: the database (or the server) still refuses them; fix what "
                    "this doctor says about it, then any `lore` command writes them"
                    if stuck
                    else " (written by the next lore process that reaches the database)"
                ),
            )
        )
    if gave_up:
        lines.append(
            (
                "FAIL",
                f"spool: {len(gave_up)} hook writes could not be written after {spool.MAX_ATTEMPTS} tries "
                f"→ they are in {where / 'failed'}; `lore log` shows what was written, the hook log why",
            )
        )
    for run in hookruns.abandoned(env, take=False):
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(run.started))
        lines.append(
            (
                "WARN",
                f"hook {run.client} {run.event}: the run that started {when} never finished: its agent "
                "stopped it → give the hook the timeout `lore install` writes (5 s)",
            )
        )


def _made(path: os.PathLike[str]) -> float:
    name = (
        os.path.basename(path).split("-", 2)[-1]
        if os.path.basename(path).startswith(".")
        else os.path.basename(path)
    )
    head = name.split("-", 1)[0]
    return int(head) / 1e9 if head.isdigit() else time.time()
