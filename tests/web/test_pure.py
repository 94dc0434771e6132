"""The UI's pure parts, without a browser or a database: pictures, session secrets, redirects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import cast

import anyio
from starlette.requests import Request

from lore.http.web import app, sessions, svg
from lore.service.runtime import Runtime
from lore.store import auth

T0 = datetime(2026, 11, 1, 12, tzinfo=UTC)
EVIL = '<script>alert(1)</script>"&'


def test_timeline_escapes_and_draws_both_axes() -> None:
    spans = [
        svg.Span(f"v1 · {EVIL}", T0, T0 + timedelta(hours=1), T0 - timedelta(days=30), None, "superseded"),
        svg.Span("v2 · fixed", T0 + timedelta(hours=1), None, T0, T0 + timedelta(days=60), "current"),
    ]
    out = str(svg.timeline(spans, now=T0 + timedelta(days=1)))
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count('class="tl-row') == 2
    assert out.count('rect class="tl-believed') == 2 and out.count('rect class="tl-valid"') == 2
    assert out.count("tl-open") == 2  # v1 still "true" (no valid_to), v2 still believed
    assert ">now</text>" in out


def test_long_labels_wrap_on_words_and_keep_their_text() -> None:
    out = svg._lines("v2 · acme-api deploys with make release; make ship is retired", 36, 8, 10, 15)
    assert out.count("<tspan") == 2 and "deploys with " in out and "make ship is retired" in out


def test_neighbourhood_escapes_and_points_along_edges() -> None:
    center = svg.Node(1, EVIL, "note")
    nodes = {2: svg.Node(2, "Migrations", "decision"), 3: svg.Node(3, "Rollbacks", "pattern")}
    arcs = [svg.Arc(2, "depends_on", True), svg.Arc(3, "refines", False), svg.Arc(9, "blocks", True)]
    out = str(svg.neighbourhood(center, nodes, arcs))
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count('class="edge"') == 2  # n_9 is not readable: no edge to nowhere
    assert 'href="/notes/n_2"' in out and 'href="/notes/n_3"' in out


def test_spaces_map_draws_each_flow_once() -> None:
    flows = [
        svg.Flow("work", "home", "reads"),
        svg.Flow("home", "work", "writes"),
        svg.Flow("a", "zz", "reads"),
    ]
    out = str(svg.spaces_map(["work", "home", EVIL], flows, default="work"))
    assert out.count('class="flow flow-') == 2 and "&lt;script&gt;" in out and "<script>" not in out
    assert 'data-from="home" data-to="work"' in out


def test_csrf_tokens_belong_to_one_session() -> None:
    one, two = sessions.new_secret(), sessions.new_secret()
    assert sessions.csrf_ok(one, sessions.csrf_token(one))
    assert not sessions.csrf_ok(one, sessions.csrf_token(two))
    assert not sessions.csrf_ok(one, "")
    assert not auth.looks_like_token(one)  # a session secret is never a bearer token
    assert sessions.looks_like_session(one) and not sessions.looks_like_session("lore_" + "a" * 43)


def test_a_session_never_outlives_its_token() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    assert sessions.expiry(now, None) == now + sessions.TTL
    assert sessions.expiry(now, now + timedelta(hours=1)) == now + timedelta(hours=1)


def test_memory_sessions_and_the_one_time_link() -> None:
    store = sessions.MemorySessions()

    async def run() -> None:
        session = await store.start(None)
        assert session.user == "local"
        assert (await store.find(session.secret)) == session
        await store.end(session.secret)
        assert await store.find(session.secret) is None
        assert await store.find("lorew_unknown") is None

    anyio.run(run)
    link = sessions.SignInLink()
    assert not link.consume("wrong") and not link.used
    assert link.consume(link.code) and link.used
    assert not link.consume(link.code)


def test_redirects_stay_on_this_site() -> None:
    for bad in ("//evil.example/x", "http://evil.example", "/\\evil.example", "", "javascript:alert(1)"):
        assert app._safe_next(bad) == "/spaces"
    assert app._safe_next("/facts?space=work") == "/facts?space=work"


def _request(method: str, path: str) -> Request:
    return Request({"type": "http", "method": method, "path": path, "headers": [], "query_string": b""})


def test_error_pages_lead_back_to_the_form_they_came_from() -> None:
    assert app._back(_request("POST", "/facts/f_3/revise")) == "/facts/f_3"
    assert app._back(_request("POST", "/tasks/n_5")) == "/tasks"
    assert app._back(_request("GET", "/facts/f_9")) == "/spaces"


def test_the_readme_shows_a_screenshot_of_the_ui() -> None:
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    assert "](docs/screenshots/web-fact-history.png)" in readme
    picture = root / "docs" / "screenshots" / "web-fact-history.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size < 300_000


def test_cookies_are_secure_over_https() -> None:
    behind_proxy = app.UI(cast(Runtime, None), sign_in=False, base_url="https://lore.example.com")
    plain = app.UI(cast(Runtime, None), sign_in=False, base_url="http://127.0.0.1:8765")
    request = _request("GET", "/sign-in")
    assert behind_proxy.cookie_name(request) == "__Host-lore_session"
    assert plain.cookie_name(request) == "lore_session"
    tls = Request({**request.scope, "scheme": "https", "server": ("lore.example.com", 443)})
    assert plain.secure(tls) and plain.cookie_name(tls) == "__Host-lore_session"
    form = behind_proxy.sign_in_form(Request({**request.scope, "headers": [(b"host", b"127.0.0.1")]}))
    cookie = form.headers["set-cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie


def test_a_path_wraps_between_folders_and_is_escaped() -> None:
    html = str(app.path_html("/home/al<i>ce/codes/acme-api"))
    assert html == '<code class="path">/<wbr>home/<wbr>al&lt;i&gt;ce/<wbr>codes/<wbr>acme-api</code>'


def test_the_sign_in_link_expires_while_unused() -> None:
    """Trust round 4, item 7: local mode's one-time link never expired while unused (a link left in
    scrollback or a shell log opened the UI days later). It works for 10 minutes."""
    now = [1000.0]
    link = sessions.SignInLink(clock=lambda: now[0])
    now[0] += sessions.LINK_TTL.total_seconds() - 1
    assert not link.expired
    later = sessions.SignInLink(clock=lambda: now[0])
    now[0] += 1
    assert link.expired and not link.consume(link.code) and not link.used  # expired, not used
    assert later.consume(later.code)  # one made later is still good
    assert sessions.LINK_TTL.total_seconds() == 600
    assert "expired (10 minutes" in app._LINK_EXPIRED and "lore serve" in app._LINK_EXPIRED
