"""What a new user tripped on in the web UI (issue 41): the top menu broken at phone width, the Log
detail page scrolling sideways at 1280 px, pages of one space opening on the (empty) default space
where Facts opened on the one the agents use, the local secret `make run` prints refused by the
sign-in page, and one handoff shown under two ids. Layout is checked at 390 px (a phone) and 1280 px."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx2
import psycopg
from playwright.sync_api import Page, expect
from support import handoffs as written_handoffs
from support.lorehttp import bearer, start_server

from lore.core import capture, local_secret
from lore.core.session import Origin
from lore.store import notes

from .conftest import Team, Watched, sign_in
from .seed import seed

WIDTHS = (390, 1280)
# An unbroken run longer than any line at 1280 px (no space, no hyphen to break at).
LONG = "build-cache-key:" + "a1b2c3d4e5" * 24


def _record_led_by_a_handoff(team: Team, conn: psycopg.Connection) -> tuple[int, str]:
    """A session start of alice's that led with a handoff whose row id (1) is not its note's id,
    and a fact holding one long unbroken line. Returns (the record's id, the handoff's n_ id)."""
    work = team.project / "work"
    alice = bearer(team.tokens["alice"], work)
    for body in ("A note before the handoff.", "And another one."):  # the handoff's note: n_3 or later
        notes.remember(conn, Origin("alice/work", "claude-code", str(work)), body)
    conn.commit()
    for statement in (f"The CI cache key is {LONG}", "acme-api deploys with make ship"):
        made = httpx2.post(f"{team.url}/api/facts", json={"statement": statement}, headers=alice)
        assert made.status_code == 201, made.text
    h = capture.Handoff(
        "alice/work", "codex", "s1", str(work), str(work), "work", "Stop", "Fixed the login.", 16, None, None
    )
    row = written_handoffs.record(conn, h)
    assert row.note_id is not None and row.note_id != f"n_{row.id}"
    started = httpx2.get(
        f"{team.url}/api/session-start", params={"client": "claude-code", "session_id": "a1"}, headers=alice
    )
    assert started.status_code == 200 and f"(handoff {row.note_id})" in started.json()["text"], started.text
    assert LONG in started.json()["text"]
    return int(started.json()["record"]), row.note_id


def _fits(page: Page, width: int, where: str) -> None:
    """Nothing scrolls sideways, and every menu item is whole, inside the header, on screen and
    clear of the others, the brand and the sign-out."""
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{where} at {width} px scrolls sideways: {scroll} px wide"
    header = page.locator("header.top").bounding_box()
    assert header is not None
    boxes: list[tuple[str, Any]] = [
        ("brand", page.locator("header .brand").bounding_box()),
        ("sign-out", page.get_by_role("button", name="Sign out").bounding_box()),
    ]
    boxes += [(f"menu {a.inner_text()}", a.bounding_box()) for a in page.locator("header nav a").all()]
    assert len(boxes) == 10, boxes
    for name, box in boxes:
        assert box is not None, (where, width, name)
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, (where, width, name, box)
        inside = header["y"] <= box["y"] and box["y"] + box["height"] <= header["y"] + header["height"] + 0.5
        assert inside, (where, width, name, box, header)
    for i, (one, a) in enumerate(boxes):
        for other, b in boxes[i + 1 :]:
            apart = (
                a["x"] + a["width"] <= b["x"] + 0.5
                or b["x"] + b["width"] <= a["x"] + 0.5
                or a["y"] + a["height"] <= b["y"] + 0.5
                or b["y"] + b["height"] <= a["y"] + 0.5
            )
            assert apart, f"{where} at {width} px: {one} overlaps {other}"


def test_every_page_fits_a_phone_and_a_desktop(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    seed(conn, "alice", str(team.project))
    record, _ = _record_led_by_a_handoff(team, conn)
    sign_in(web, team.url, team.tokens["alice"])
    page = web.page
    paths = [
        "/spaces",
        "/facts",
        "/notes",
        "/tasks",
        "/messages",
        "/sessions",
        "/tidy",
        "/log",
        f"/log/{record}",
    ]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 860})
        for path in paths:
            page.goto(f"{team.url}{path}?space=work" if path != f"/log/{record}" else f"{team.url}{path}")
            _fits(page, width, path)
        # The Log detail: the agent's text wraps inside the page, its line breaks kept.
        injected = page.locator("pre.injected").bounding_box()
        assert injected is not None and injected["x"] + injected["width"] <= width
        assert LONG in page.locator("pre.injected").inner_text().replace("\n", "")
        web.screenshot(f"log-detail-{width}")
        page.goto(f"{team.url}/facts?space=work")
        web.screenshot(f"facts-{width}")


def test_pages_of_one_space_open_on_the_space_the_agents_use(team: Team, web: Watched) -> None:
    """alice's default space is `work`; her agents wrote to `home` only. Every page of one space
    opens on `home` when none is named (Facts did; Tasks, Messages, Sessions, Tidy and Log opened
    on the empty default), and the menu keeps the space a page shows."""
    home = bearer(team.tokens["alice"], team.project / "home")
    made = httpx2.post(
        f"{team.url}/api/facts", json={"statement": "Dotfiles live in ~/dotfiles"}, headers=home
    )
    assert made.status_code == 201, made.text
    sign_in(web, team.url, team.tokens["alice"])
    page = web.page
    for path in ("/facts", "/tasks", "/messages", "/sessions", "/tidy", "/log"):
        page.goto(f"{team.url}{path}")
        expect(page.locator(".titlebar h1 .muted")).to_have_text(re.compile(r"^(in|of) home$"))
    page.goto(f"{team.url}/facts?space=work")
    for label in ("Log", "Sessions", "Tidy", "Tasks", "Messages"):
        page.locator("header nav").get_by_role("link", name=label, exact=True).click()
        expect(page.locator(".titlebar h1 .muted")).to_have_text(re.compile(r"^(in|of) work$"))


def test_the_injection_page_names_its_handoff_by_the_id_the_text_uses(
    team: Team, conn: psycopg.Connection, web: Watched
) -> None:
    record, note = _record_led_by_a_handoff(team, conn)
    alice = bearer(team.tokens["alice"], team.project / "work")
    assert httpx2.get(f"{team.url}/api/log/{record}", headers=alice).json()["record"]["handoff"] == note
    assert httpx2.get(f"{team.url}/api/log", headers=alice).json()["records"][0]["handoff"] == note
    sign_in(web, team.url, team.tokens["alice"], f"/log/{record}")
    page = web.page
    expect(page.locator("p.meta", has_text="led with handoff")).to_contain_text(f"led with handoff {note}")
    expect(page.get_by_role("link", name=note, exact=True)).to_have_attribute("href", f"/notes/{note}")
    assert f"(handoff {note})" in page.locator("pre.injected").inner_text()


def test_the_local_secret_signs_in_and_a_wrong_value_says_what_to_paste(
    lore_env: dict[str, str], tmp_path: Path, web: Watched
) -> None:
    Path(lore_env["LORE_CONFIG"]).write_text('default_space = "personal"\n[[space]]\nid = "personal"\n')
    server = start_server({**lore_env, "LORE_EMBEDDER": "fake"}, tmp_path / "serve.log")
    try:
        secret = local_secret.read_or_create(lore_env)  # what `make run` printed as the Bearer value
        page = web.page
        page.goto(f"{server.url}/facts")
        page.wait_for_url(re.compile(r"/sign-in\?next="))
        expect(page.locator(".signin")).to_contain_text("lore token local")
        page.get_by_label("Local secret or token").fill("lore_" + "x" * 43)
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.locator(".error")).to_contain_text("`lore token local` prints it again")
        page.get_by_label("Local secret or token").fill(secret)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(re.compile(r"/facts$"))
        expect(page.locator(".who")).to_have_text("local")
    finally:
        server.stop()
