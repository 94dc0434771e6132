"""`/api` routes for tasks and messages (`lore tasks`, `lore messages` on a client: lore.cli.gateway):
the same use cases as the MCP tools (lore.service.work), in the space the server resolves from the
caller's workspace. A target (`to`) is checked there as everywhere: the target's `accepts_from` must
name the caller's space (across users, both configs must name each other: docs/design.md, Teammates);
anything else is the same "no space" as a space that does not exist.

    GET  /api/tasks?workspace=[&all=1]   the space's open tasks (all: done ones too)
    POST /api/tasks                      {"title", "body"?, "to"?, "allow_secret"?}: 201 with the task
    GET  /api/tasks/{id}                 one task and its status changes
    POST /api/tasks/{id}                 {"status", "note"?}: the task's new status
    GET  /api/messages?workspace=        the latest messages to and from the space (none marked read)
    POST /api/messages/read              claim the unread ones (at most 10), with the open tasks
    POST /api/messages                   {"to", "body", "reply_to"?, "wait_seconds"?, "allow_secret"?}
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lore.http.api_routes import Routes, posted, runtime, session
from lore.service import wire, work


async def task_list(request: Request) -> Response:
    state = runtime(request)
    if request.method == "POST":
        data, here = await posted(request)
        title = data.get("title")
        filed = await state.call(
            work.file_task,
            here,
            title,
            data.get("body") or title,
            to=data.get("to"),
            allow_secret=data.get("allow_secret") is True,
        )
        return JSONResponse(wire.task(filed), status_code=201)
    here = await session(request)
    every = request.query_params.get("all") in ("1", "true")
    rows, total = await state.call(work.person_tasks, here.space, every=every)
    return JSONResponse(wire.tasks(here.space, rows, total))


async def task_one(request: Request) -> Response:
    task_id, state = request.path_params["id"], runtime(request)
    if request.method == "POST":
        data, here = await posted(request)
        before, task = await state.call(work.update_task, here, task_id, data.get("status"), data.get("note"))
        return JSONResponse(wire.updated(before, task))
    here = await session(request)
    task, events = await state.call(work.task, here.readable, task_id)
    return JSONResponse(wire.task(task, events))


async def message_list(request: Request) -> Response:
    if request.method == "POST":
        return await _message_send(request)
    here = await session(request)
    shown = await runtime(request).call(work.recent_messages, here.space)
    return JSONResponse(wire.message_list(here.space, shown))


async def _message_send(request: Request) -> Response:
    data, here = await posted(request)
    sent = await work.send_message(
        runtime(request),
        here,
        data.get("to"),
        data.get("body"),
        reply_to=data.get("reply_to"),
        wait_seconds=data.get("wait_seconds") or 0,
        reader=here.source,
        allow_secret=data.get("allow_secret") is True,
    )
    return JSONResponse(wire.sent(sent), status_code=201)


async def message_read(request: Request) -> Response:
    _, here = await posted(request)
    got = await runtime(request).call(work.read_messages, here, here.source)
    return JSONResponse(wire.inbox(here.space, got))


ROUTES: Routes = [
    ("/api/tasks", task_list, ["GET", "POST"]),
    ("/api/tasks/{id}", task_one, ["GET", "POST"]),
    ("/api/messages", message_list, ["GET", "POST"]),
    ("/api/messages/read", message_read, ["POST"]),
]
