"""The web UI's routes, mounted into `lore serve`'s app: the frame's own (home, sign-in, sign-out,
static files) and every page's, each behind the UI's guard. Apart from lore.http.web.app so that the
pages (lore.http.web.memory, .work, .tidy), which build on the frame, are imported by no module
they import."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from lore.http.web import memory, tidy, work
from lore.http.web.app import HEADERS, UI, Page
from lore.service.runtime import Runtime

# Every page (GET: one use case of lore.service.pages) and every form (POST: one
# of lore.service.forms, memory.remember_fact or lore.service.tidy), each behind the guard.
PAGES: dict[str, Page] = {
    "/spaces": work.spaces_page,
    "/facts": memory.facts_page,
    "/facts/{id}": memory.fact_page,
    "/notes": memory.notes_page,
    "/notes/{id}": memory.note_page,
    "/tasks": work.tasks_page,
    "/messages": work.messages_page,
    "/sessions": work.sessions_page,
    "/log": work.log_page,
    "/log/{id}": work.injection_page,
    "/tidy": tidy.tidy_page,
}
FORMS: dict[str, Page] = {
    "/facts/add": memory.fact_add,
    "/facts/{id}/revise": memory.fact_revise,
    "/facts/{id}/forget": memory.fact_forget,
    "/notes/{id}/edit": memory.note_edit,
    "/notes/{id}/link": memory.note_link,
    "/notes/{id}/forget": memory.note_forget,
    "/tasks/{id}": work.task_update,
    "/tidy/act": tidy.tidy_act,
}


def mount(
    app: Starlette, state: Runtime, *, sign_in: bool, base_url: str, local_secret: str | None = None
) -> str | None:
    """Add the UI's routes to `lore serve`'s app. Returns, in local mode, the one-time sign-in link
    to print in the terminal that started the server (None in sign-in mode). `local_secret`: local
    mode's, which the sign-in form takes too (it already opens `/api` and `/mcp`)."""
    ui = UI(state, sign_in=sign_in, base_url=base_url, local_secret=local_secret)

    async def home(request: Request) -> Response:
        return RedirectResponse("/spaces", 303, headers=HEADERS)

    routes = [
        Route("/", home, methods=["GET"]),
        Route("/sign-in", ui.sign_in_page, methods=["GET", "POST"]),
        Route("/sign-out", ui.sign_out, methods=["POST"]),
        Route("/static/{name}", ui.static, methods=["GET"]),
    ]
    for path, handler in PAGES.items():
        routes.append(Route(path, ui.guard(handler), methods=["GET"]))
    for path, handler in FORMS.items():
        routes.append(Route(path, ui.guard(handler), methods=["POST"]))
    app.router.routes.extend(routes)
    if ui.link is None:
        return None
    return f"{base_url}/sign-in?code={ui.link.code}"
