"""Pages: Spaces (what resolves to each, stale paths, who reads and writes into whom), Tasks (inboxes:
accept or reject; move any task), Messages (by thread, without marking anything read: that stays
the agents' job) and Sessions (the handoffs each agent's sessions left, by day)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lore.core import inbox, validate
from lore.core.config import stale_paths
from lore.core.errors import InvalidInput, LoreError
from lore.core.rows import Counts, Handoff, Message
from lore.core.workspace import MAX_WORKSPACE, WorkspaceSignal
from lore.http.web import svg
from lore.service import forms, pages

if TYPE_CHECKING:
    from lore.http.web.app import UI, Viewer

ALL_STATUSES = ("inbox", "doing", "blocked", "todo", "done")
DONE_MESSAGES = {
    "accepted": "Accepted: the task is now in the backlog (todo).",
    "rejected": "Rejected.",
    "moved": "Status changed.",
}


async def spaces_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    config = viewer.config
    # In sign-in mode paths name directories on each user's own machine: the server cannot check them.
    stale = set() if ui.sign_in else set(stale_paths(config, viewer.env))
    counts, seen = await ui.state.call(pages.spaces, config.ids)
    flows = [
        svg.Flow(viewer.name(s.id), viewer.name(r), "reads") for s in config.spaces for r in s.reads_from
    ]
    flows += [
        svg.Flow(viewer.name(a), viewer.name(s.id), "writes") for s in config.spaces for a in s.accepts_from
    ]
    rows = []
    for space in config.spaces:
        rows.append(
            {
                "name": viewer.name(space.id),
                "default": space.id == config.default_space,
                "paths": [(p, (space.id, p) in stale) for p in space.paths],
                "remotes": space.remotes,
                "reads_from": [viewer.name(r) for r in space.reads_from],
                "accepts_from": [viewer.name(a) for a in space.accepts_from],
                "counts": counts.get(space.id, Counts()),
                "seen": [s for s in seen if s.space == space.id][:8],
            }
        )
    which = await _which(ui, viewer, request.query_params.get("which", "").strip())
    default = viewer.name(config.default_space) if config.default_space else None
    path = str(config.path) if config.path and not ui.sign_in else None  # sign-in: a pushed config
    return ui.page(
        request,
        viewer,
        "spaces.html",
        spaces=rows,
        picture=svg.spaces_map(viewer.names(), flows, default) if flows else None,  # no empty box
        which=which,
        checked_paths=not ui.sign_in,
        config_path=path,
    )


async def _which(ui: UI, viewer: Viewer, directory: str) -> dict[str, Any] | None:
    """`lore which DIR` on the page: the space a directory resolves to, and why (or the error)."""
    if not directory:
        return None
    shown = directory[:MAX_WORKSPACE]
    out: dict[str, Any] = {"dir": shown, "error": None, "hint": "", "space": None, "reads": []}
    try:
        # In sign-in mode the directory is on the person's machine: resolved as written (Runtime.resolve).
        signal = WorkspaceSignal(Path(directory), "web")  # its git files are read off the event loop
        resolved = await anyio.to_thread.run_sync(ui.state.resolve, signal, viewer.config, viewer.env, "web")
    except LoreError as exc:
        return out | {"error": exc.message, "hint": exc.hint}
    reads = [viewer.name(s) for s in resolved.readable if s != resolved.space]
    return out | {"space": viewer.name(resolved.space), "reason": resolved.resolved.reason, "reads": reads}


async def tasks_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    page = await ui.state.call(pages.tasks, ui.pick(request, viewer), ALL_STATUSES, limit=300)
    groups = {status: [t for t in page.shown if t.status == status] for status in ALL_STATUSES}
    return ui.space_page(
        request, viewer, "tasks.html", page.space, DONE_MESSAGES, groups=groups, statuses=inbox.STATUSES
    )


async def task_update(ui: UI, request: Request, viewer: Viewer) -> Response:
    task_id = request.path_params["id"]
    form = await ui.form(request)
    action = str(form.get("action", ""))
    reason = validate.optional(form.get("reason") or None, "reason", validate.MAX_REASON)
    note: str | None
    if action == "accept":
        status, note, done = "todo", "accepted in the web UI", "accepted"
    elif action == "reject":
        status, note, done = "done", "rejected in the web UI" + (f": {reason}" if reason else ""), "rejected"
    elif action == "move":
        status, note, done = inbox.parse_status(form.get("status")), reason, "moved"
    else:
        raise InvalidInput(f"Unknown action {action[:40]!r}.", "Use the Accept, Reject or Move buttons.")
    task = await ui.state.call(forms.move_task, viewer.person, task_id, status, note)
    return RedirectResponse(f"/tasks?space={viewer.name(task.space)}&done={done}", 303)


async def messages_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    page = await ui.state.call(pages.messages, ui.pick(request, viewer), limit=300)
    return ui.space_page(request, viewer, "messages.html", page.space, threads=threads(page.shown))


async def sessions_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    """The space's timeline: each agent session's handoff (migration 0007), newest first, by day."""
    page = await ui.state.call(pages.sessions, ui.pick(request, viewer), limit=200)
    days: dict[str, list[Handoff]] = {}
    agents: dict[str, int] = {}
    for row in page.shown:
        days.setdefault(f"{row.updated_at:%Y-%m-%d}", []).append(row)
        agents[row.client] = agents.get(row.client, 0) + 1
    return ui.space_page(
        request,
        viewer,
        "sessions.html",
        page.space,
        days=list(days.items()),
        agents=sorted(agents.items(), key=lambda item: (-item[1], item[0])),
    )


async def log_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    """What lore told the agents of a space: every injection, newest first (`lore log`)."""
    page = await ui.state.call(pages.injections, ui.pick(request, viewer), limit=200)
    return ui.space_page(request, viewer, "log.html", page.space, rows=page.shown)


async def injection_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    """One injection: what was shown and cut, and the text exactly as the agent received it."""
    page = await ui.state.call(pages.injection, viewer.ids, request.path_params["id"])
    row = page.row
    space = viewer.name(row.space) if row.space else ""
    # the handoff as n_N, as the text itself says
    return ui.page(request, viewer, "injection.html", row=row, handoff=page.handoff, space=space)


def threads(rows: Sequence[Message]) -> list[list[Message]]:
    """Messages grouped by thread (oldest first inside one), the most recently active thread first."""
    grouped: dict[int, list[Message]] = {}
    for message in sorted(rows, key=lambda m: m.num):
        grouped.setdefault(message.thread, []).append(message)
    return sorted(grouped.values(), key=lambda thread: -thread[-1].num)
