"""Page: Tidy (near duplicates, likely conflicts and stale items of one space, each with the acts that
settle it: merge, keep both, forget; the recent acts, each undoable). The same use cases as
`lore tidy` (lore.service.tidy), acting from the space shown with `web` as the client."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from lore.core.errors import InvalidInput
from lore.service import pages, tidy

if TYPE_CHECKING:
    from lore.http.web.app import UI, Viewer


async def tidy_page(ui: UI, request: Request, viewer: Viewer) -> Response:
    # In sign-in mode the paths name the user's machine, which the server cannot see.
    page = await ui.state.call(pages.tidying, ui.pick(request, viewer), check_paths=not ui.sign_in)
    found = page.shown
    # `?act=N`: the act a form just did (said from the audit, never from the URL's text).
    just = request.query_params.get("act", "")
    said = next((a for a in found.actions if str(a.id) == just), None)
    return ui.space_page(
        request, viewer, "tidy.html", page.space, report=found, said=said, checked_paths=not ui.sign_in
    )


async def tidy_act(ui: UI, request: Request, viewer: Viewer) -> Response:
    """One form for every act: `act` (merge, keep, forget, undo, redo) and its fields."""
    space_id = viewer.space_id(request.query_params.get("space"))
    form = await ui.form(request)
    who = viewer.person.acting(space_id)
    act = str(form.get("act", ""))
    items = [str(x) for x in form.getlist("item")]
    into = str(form.get("into", "")) or (items[0] if items else "")
    if act == "merge":
        items = [x for x in items if x != into]
    reason, action = form.get("reason") or None, form.get("action")
    done = await ui.state.call(tidy.act, who, act, items=items, into=into, reason=reason, action=action)
    if done is None:
        raise InvalidInput(f"Unknown act {act[:40]!r}.", "Use the buttons of the Tidy page.")
    return RedirectResponse(f"/tidy?space={quote(viewer.name(space_id), safe='')}&act={done.action}", 303)
