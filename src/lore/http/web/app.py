"""The web UI's frame (its routes are lore.http.web.routes'): sign-in and sign-out, the guard every page goes
through (session cookie, CSRF on every POST, loopback Host in local mode), rendering and errors. The
checks it shares with the JSON API (Host, Origin, body size, the status of each error) are
lore.request_guard's.

The pages themselves live in lore.http.web.memory (facts, notes), .work (spaces, tasks, messages,
sessions, log) and .tidy; they only parse, call one use case each (lore.service.pages for a page,
lore.service.forms for a form: one transaction each), and render.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any
from urllib.parse import quote

import jinja2
from markupsafe import Markup, escape
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from lore.core import last_session, render, users
from lore.core.config import Config
from lore.core.errors import InvalidInput, LoreError, NotFound
from lore.http import guard
from lore.http.web import sessions
from lore.http.web.sessions import Session, SignInLink
from lore.service import forms, pages
from lore.service.runtime import Runtime

log = logging.getLogger("lore.http.web")
SOURCE = "web"  # the `source` of everything written from the UI (as a client name would be)
MAX_FORM = 256 * 1024
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make a form's Origin "null"
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_STATIC = {"lore.css": "text/css; charset=utf-8", "lore.js": "text/javascript; charset=utf-8"}
Page = Callable[["UI", Request, "Viewer"], Awaitable[Response]]


@dataclass(frozen=True)
class Viewer:
    """Who is looking, and the spaces they may see: the signed-in user's (sign-in mode), or the
    local config file's. Space names in URLs are the user's own (`work`), ids are full (`alice/work`)."""

    user: str  # shown in the header
    scoped_user: str | None  # sign-in mode: the ids' `<user>/` prefix; local mode: None
    config: Config
    env: Mapping[str, str]
    session: Session

    @property
    def csrf(self) -> str:
        return self.session.csrf

    @property
    def ids(self) -> tuple[str, ...]:
        return self.config.ids

    def name(self, space_id: str) -> str:
        return users.local_name(self.scoped_user, space_id) if self.scoped_user else space_id

    def names(self) -> list[str]:
        return [self.name(s) for s in self.ids]

    def space_id(self, name: str | None) -> str:
        """The full id of a space named in a URL or form; the default space when none is named."""
        if not name:
            default = self.config.default_space or (self.ids[0] if self.ids else None)
            if default is None:
                raise NotFound("You have no spaces yet.", "Add a [[space]] to your lore config.")
            return default
        full = users.scoped(self.scoped_user, name) if self.scoped_user else name
        if full not in self.ids:
            raise NotFound(f"No space {name!r} among yours.", "Pick one of the spaces listed on Spaces.")
        return full

    @property
    def person(self) -> forms.Person:
        """Who fills in a form: their spaces, and `web` as the source of what they write."""
        return forms.Person(self.ids, SOURCE)


class UI:
    def __init__(
        self, state: Runtime, *, sign_in: bool, base_url: str, local_secret: str | None = None
    ) -> None:
        self.state = state
        self.sign_in = sign_in
        # Local mode: the secret `make run` prints signs in too (whoever holds it has /api and /mcp).
        self.local_secret = None if sign_in else local_secret
        self.https = base_url.startswith("https://")
        self.store: sessions.Store = (
            sessions.DatabaseSessions(state) if sign_in else sessions.MemorySessions(state)
        )
        self.link: SignInLink | None = None if sign_in else SignInLink()
        self.templates = jinja2.Environment(
            loader=jinja2.PackageLoader("lore.http.web", "templates"),
            autoescape=True,  # every {{ }} is escaped: memory text is data, never markup
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters["when"] = _when
        self.templates.filters["q"] = lambda value: quote(str(value), safe="")
        self.templates.filters["iso"] = _iso
        self.templates.filters["count"] = render.counted
        self.templates.globals["changes_line"] = last_session.changes_line
        self.templates.filters["path"] = path_html

    # --- responses ------------------------------------------------------------------------------

    def html(self, request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        text = self.templates.get_template(template).render(
            request=request, path=request.url.path, sign_in_mode=self.sign_in, **context
        )
        return HTMLResponse(text, status_code=status, headers=HEADERS)

    def page(
        self,
        request: Request,
        viewer: Viewer,
        template: str,
        status: int = 200,
        *,
        flash: Mapping[str, str] | None = None,
        **ctx: Any,
    ) -> Response:
        """A page for a signed-in viewer. `flash`: the page's messages for `?done=` (what the form
        that redirected here did), shown as `done`."""
        if flash is not None:
            ctx["done"] = flash.get(request.query_params.get("done", ""))
        return self.html(request, template, status, viewer=viewer, csrf=viewer.csrf, **ctx)

    def pick(self, request: Request, viewer: Viewer) -> pages.Pick:
        """The space a page of one space shows (lore.service.pages.Pick): the one its URL names;
        else, among several, the one the person's agents wrote to last, else the default space."""
        named = request.query_params.get("space")
        if named or len(viewer.ids) < 2:
            return pages.Pick(viewer.space_id(named), (), viewer.space_id(named))
        return pages.Pick(None, viewer.ids, viewer.space_id(None))

    def space_page(
        self,
        request: Request,
        viewer: Viewer,
        template: str,
        space_id: str,
        flash: Mapping[str, str] | None = None,
        **ctx: Any,
    ) -> Response:
        """A page of one space (Facts, Tasks, Messages): base.html draws its title bar and space
        picker from `space`, the space's name as the viewer writes it."""
        return self.page(request, viewer, template, flash=flash, space=viewer.name(space_id), **ctx)

    def error(
        self, request: Request, exc: LoreError, viewer: Viewer | None = None, status: int | None = None
    ) -> Response:
        status = status or guard.status(exc)
        ctx: dict[str, Any] = {"message": exc.message, "hint": exc.hint, "back": _back(request)}
        if viewer is not None:
            return self.page(request, viewer, "error.html", status, **ctx)
        return self.html(request, "error.html", status, viewer=None, csrf="", **ctx)

    def refuse(self, request: Request, message: str, status: int = 403) -> Response:
        hint = "Reload the page you came from and try again."
        return self.html(
            request,
            "error.html",
            status,
            viewer=None,
            csrf="",
            message=message,
            hint=hint,
            back=_back(request),
        )

    # --- the guard ------------------------------------------------------------------------------

    def secure(self, request: Request) -> bool:
        return self.https or request.url.scheme == "https"

    def cookie_name(self, request: Request) -> str:
        return sessions.SECURE_COOKIE if self.secure(request) else sessions.COOKIE

    def local_refusal(self, request: Request) -> Response | None:
        """Local mode answers only a loopback Host: a page of another site cannot reach the UI
        through DNS rebinding. (Sign-in mode runs behind a proxy, under any name.)"""
        if not self.sign_in and not guard.on_loopback(request):
            return self.refuse(request, "This server answers only on the loopback interface without sign-in.")
        return None

    def cross_site(self, request: Request) -> bool:
        """A POST whose Origin (when the browser sends one) is not this server's own, `null`
        included: the same test as the JSON API's. No Origin is not enough to pass: every form also
        needs the session's CSRF token, and the session cookie is SameSite=Strict."""
        return guard.foreign_origin(request) is not None

    async def viewer(self, session: Session) -> Viewer:
        if self.state.accounts is not None:
            account = await self.state.accounts.fresh(session.user)
            return Viewer(session.user, session.user, account.config, account.env(), session)
        return Viewer(session.user, None, self.state.config(), self.state.env, session)

    def guard(self, handler: Page) -> Callable[[Request], Awaitable[Response]]:
        async def guarded(request: Request) -> Response:
            refused = self.local_refusal(request)
            if refused is not None:
                return refused
            secret = request.cookies.get(self.cookie_name(request), "")
            session = await self.store.find(secret) if secret else None
            if session is None:
                if request.method != "GET":
                    return self.refuse(request, "You are not signed in (or your session ended).", 401)
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                return RedirectResponse(f"/sign-in?next={quote(target, safe='')}", 303, headers=HEADERS)
            viewer: Viewer | None = None
            try:
                if request.method == "POST" and not await self.csrf_ok(request, session.secret):
                    log.warning("refused a POST to %s: missing or wrong CSRF token", request.url.path)
                    return self.refuse(request, "Refused: this form's security token is missing or wrong.")
                viewer = await self.viewer(session)
                return await handler(self, request, viewer)
            except LoreError as exc:
                return self.error(request, exc, viewer)
            except Exception:
                log.exception("web UI: %s %s failed", request.method, request.url.path)
                problem = LoreError(
                    "Something went wrong on the server.", "The server's log has the details."
                )
                return self.error(request, problem, viewer, status=500)

        return guarded

    async def csrf_ok(self, request: Request, secret: str) -> bool:
        """A POST from one of our own pages: the session's CSRF token, and no other site's Origin."""
        form = await self.form(request)
        return not self.cross_site(request) and sessions.csrf_ok(secret, str(form.get("csrf", "")))

    async def form(self, request: Request) -> FormData:
        """The request's form (parsed once; Starlette caches it on the request)."""
        if guard.declared_over(request, MAX_FORM):
            raise InvalidInput(f"The form is larger than {MAX_FORM // 1024} KiB.", "Send less text.")
        return await request.form(max_files=0, max_fields=200, max_part_size=MAX_FORM)

    # --- sign-in and sign-out ---------------------------------------------------------------------

    async def sign_in_page(self, request: Request) -> Response:
        refused = self.local_refusal(request)
        if refused is not None:
            return refused
        if request.method == "GET":
            secret = request.cookies.get(self.cookie_name(request), "")
            if secret and request.query_params.get("code") is None and await self.store.find(secret):
                return RedirectResponse(
                    _safe_next(request.query_params.get("next", "")), 303, headers=HEADERS
                )
            return self.sign_in_form(request)
        expected = request.cookies.get(_SIGNIN_COOKIE, "")
        try:
            form = await self.form(request)
        except LoreError as exc:
            return self.error(request, exc)
        if not expected or not await self.csrf_ok(request, expected):
            return self.refuse(request, "Refused: this sign-in form is stale or came from another site.")
        code, token = str(form.get("code", "")).strip(), str(form.get("token", "")).strip()
        session: Session | None
        if code and self.link is not None:
            if not self.link.consume(code):
                error = _LINK_EXPIRED if self.link.expired and not self.link.used else _LINK_USED
                return self.sign_in_form(request, status=401, error=error, then=form.get("next"))
            session = await self.store.start()
        elif self.local_secret is None or not hmac.compare_digest(token.encode(), self.local_secret.encode()):
            # the token checked and (sign-in mode) the session started: one transaction
            session = await self.store.sign_in(token)
            if session is None:
                return self.sign_in_form(
                    request, status=401, error=self.refused_token(), then=form.get("next")
                )
        else:
            session = await self.store.start()
        response = RedirectResponse(_safe_next(str(form.get("next", ""))), 303, headers=HEADERS)
        ttl = int(sessions.TTL.total_seconds())
        self.set_cookie(request, response, self.cookie_name(request), session.secret, ttl, "/")
        response.delete_cookie(_SIGNIN_COOKIE, path="/sign-in")
        return response

    def refused_token(self) -> str:
        if self.sign_in:
            return "That token is not valid."
        return (
            "That is neither your local secret nor a token. Your local secret is the Bearer value "
            "`make run` printed (`lore token local` prints it again); a token comes from "
            "`lore token create YOUR_NAME`."
        )

    def sign_in_form(
        self, request: Request, status: int = 200, error: str | None = None, then: object = None
    ) -> Response:
        """The form; `then`: where to go once signed in, when a posted form already said (a retry
        keeps it), else the page's own `next`."""
        nonce = sessions.new_secret()  # double-submit: a cookie and the same token in the form
        code = request.query_params.get("code", "") if self.link is not None else ""
        response = self.html(
            request,
            "signin.html",
            status,
            viewer=None,
            csrf=sessions.csrf_token(nonce),
            error=error,
            code=code[:100],
            next=_safe_next(str(then) if then is not None else request.query_params.get("next", "")),
            link_used=self.link is not None and self.link.used,
        )
        self.set_cookie(request, response, _SIGNIN_COOKIE, nonce, 3600, "/sign-in")
        return response

    def set_cookie(
        self, request: Request, response: Response, name: str, value: str, max_age: int, path: str
    ) -> None:
        """A cookie no script reads and no other site's request carries: HttpOnly, SameSite=Strict,
        Secure over https."""
        secure = self.secure(request)
        response.set_cookie(
            name, value, max_age=max_age, path=path, secure=secure, httponly=True, samesite="strict"
        )

    async def sign_out(self, request: Request) -> Response:
        refused = self.local_refusal(request)
        if refused is not None:
            return refused
        name = self.cookie_name(request)
        secret = request.cookies.get(name, "")
        session = await self.store.find(secret) if secret else None
        if session is not None:
            try:
                allowed = await self.csrf_ok(request, session.secret)
            except LoreError as exc:
                return self.error(request, exc)
            if not allowed:
                return self.refuse(request, "Refused: this form's security token is missing or wrong.")
            await self.store.end(session.secret)
        response = RedirectResponse("/sign-in?signed_out=1", 303, headers=HEADERS)
        response.delete_cookie(name, path="/", secure=self.secure(request), httponly=True, samesite="strict")
        return response

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in _STATIC:
            return Response("not found", status_code=404, media_type="text/plain")
        body = resources.files("lore.http.web").joinpath("static", name).read_bytes()
        headers = {**HEADERS, "Cache-Control": "max-age=300"}
        return Response(body, media_type=_STATIC[name], headers=headers)


_SIGNIN_COOKIE = "lore_signin"
_LINK_USED = (
    "This sign-in link was used already. Sign in with a token from `lore token create NAME`, "
    "or restart `lore serve` for a new link."
)
_LINK_EXPIRED = (
    f"This sign-in link expired ({int(sessions.LINK_TTL.total_seconds() // 60)} minutes after "
    "`lore serve` printed it). Restart `lore serve` (or `lore run`) for a new link, or sign in with a "
    "token from `lore token create NAME`."
)


def _back(request: Request) -> str:
    """Where an error page's "Back" goes: the page a form was on (`/facts/f_3/revise` -> `/facts/f_3`,
    `/tasks/n_5` -> `/tasks`), or the spaces."""
    parts = request.url.path.strip("/").split("/")
    if request.method != "POST" or not parts[0]:
        return "/spaces"
    return "/" + "/".join(parts[:-1] if len(parts) > 2 else parts[:1])


def _safe_next(value: str) -> str:
    """Only a path of this site (never `//other.site` or a scheme): no open redirect."""
    if value.startswith("/") and not value.startswith("//") and "\\" not in value and len(value) < 2000:
        return value
    return "/spaces"


def path_html(value: object) -> Markup:
    """A path as `<code class="path">`, escaped, with a line-break opportunity after each `/`: a
    long path wraps between its folders, never inside a folder's name."""
    escaped = str(escape(str(value))).replace("/", "/<wbr>")
    return Markup(f'<code class="path">{escaped}</code>')


def _when(value: Any, fmt: str = "%Y-%m-%d %H:%M") -> str:
    return value.strftime(fmt) if value is not None else ""


def _iso(value: datetime | None) -> str:
    """A time for a form field: the date alone at midnight UTC, else to the second."""
    if value is None:
        return ""
    value = value.astimezone(UTC)
    if (value.hour, value.minute, value.second, value.microsecond) == (0, 0, 0, 0):
        return value.date().isoformat()
    return value.replace(microsecond=0).isoformat().replace("+00:00", "Z")
