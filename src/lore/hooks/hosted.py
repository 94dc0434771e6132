"""The hooks in hosted mode (`LORE_URL`, `LORE_TOKEN`): each event is one request to the server's
`/api/hooks/*` route, which resolves the space and calls the same use case as the local hook
(lore.service.events) and records the outcome there. What this machine alone knows goes along: the
workspace, its git top-level ("here") and name, its remotes (normalised: never a credential), the
session end's capture. A write the server does not take goes to the spool, for this server."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore.core import spool
from lore.core.ending import Ending
from lore.core.workspace import git_info, normalise_remote, workspace_name
from lore.hooks import remote
from lore.hooks.gateway import Server
from lore.hooks.guard import Run


@dataclass(frozen=True)
class Answer:
    text: str
    space: str
    outcome: str
    shown: int = 0


def where(workspace: str) -> dict[str, Any]:
    """What the server needs to know of the workspace and cannot see: its path, root, name, remotes."""
    path = Path(workspace)
    git = git_info(path)
    root = str(git.toplevel) if git is not None else os.path.normpath(workspace)
    remotes = [normalise_remote(r) for r in (git.remotes if git is not None else ())][:8]
    return {"workspace": workspace, "root": root, "name": workspace_name(path, git), "remotes": remotes}


def _post(run: Run, server: Server, path: str, body: dict[str, Any]) -> dict[str, Any]:
    timeout = max(0.05, run.left() - 0.05)
    return remote.call(server.url, server.token, path, body, timeout=timeout, named=server.named)


def _answer(data: dict[str, Any]) -> Answer:
    text = data.get("text")
    if not isinstance(text, str):
        from lore.core.errors import RemoteError

        raise RemoteError("the server's answer has no text")
    return Answer(
        text, str(data.get("space") or ""), str(data.get("outcome") or "shown"), int(data.get("shown") or 0)
    )


def session_start(run: Run, server: Server) -> Answer:
    body = {**where(run.workspace), "client": run.client, "session_id": run.session_id}
    answer = _answer(_post(run, server, "/api/hooks/session-start", body))
    run.space = answer.space or None
    replay(run, server)
    return answer


def prompt(run: Run, server: Server, seen: dict[str, int]) -> tuple[Answer, dict[str, int]]:
    body = {**where(run.workspace), "client": run.client, "session_id": run.session_id, "seen": seen}
    data = _post(run, server, "/api/hooks/prompt", body)
    given = data.get("seen")
    marks: dict[str, Any] = given if isinstance(given, dict) else {}
    answer = _answer(data)
    run.space = answer.space or None
    return answer, {k: int(v) for k, v in marks.items() if k in ("message", "task") and isinstance(v, int)}


def session_end(run: Run, server: Server, ending: Ending) -> dict[str, Any]:
    body = {**where(run.workspace), "client": run.client, "ending": ending.wire()}
    return _post(run, server, "/api/hooks/session-end", body)


def replay(run: Run, server: Server) -> None:
    """Send what the spool keeps for this server (a few at a time, while the run has time); never
    raises: what is not taken stays."""
    if run.left() < 0.3 or not spool.pending(run.env):
        return

    def deliver(entry: spool.Entry) -> None:
        _post(run, server, "/api/hooks/replay", {"kind": entry.kind, "payload": entry.payload})

    try:
        spool.replay(run.env, server.origin, deliver, limit=10, until=run.until() - 0.15)
    except Exception:
        return
