"""Forms have labels and work from the keyboard alone."""

from __future__ import annotations

import re

import psycopg
from playwright.sync_api import expect

from .conftest import Team, Watched
from .seed import seed


def focused(web: Watched) -> str:
    return str(
        web.page.evaluate(
            "document.activeElement && (document.activeElement.id || document.activeElement.name || '')"
        )
    )


def tab_to(web: Watched, element_id: str, limit: int = 40) -> int:
    for presses in range(1, limit + 1):
        web.page.keyboard.press("Tab")
        if focused(web) == element_id:
            return presses
    raise AssertionError(f"Tab never reached #{element_id} (ended on {focused(web)!r})")


def test_sign_in_search_and_revise_from_the_keyboard(
    team: Team, conn: psycopg.Connection, web: Watched
) -> None:
    seeded = seed(conn, "alice", str(team.project))
    page = web.page
    page.goto(f"{team.url}/notes")
    assert focused(web) == "token"  # the sign-in form starts in its field
    page.keyboard.type(team.tokens["alice"])
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/notes$"))

    tab_to(web, "q")
    page.keyboard.type("migrations compatible")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/notes\?q=migrations"))
    expect(page.locator(".result-title").first).to_have_text("Migrations stay compatible")

    page.goto(f"{team.url}/facts/{seeded.fact}")
    tab_to(web, "subject")
    page.keyboard.press("Control+A")
    page.keyboard.type("acme-api")
    page.keyboard.press("Enter")  # Enter in a text field submits its form
    expect(page.locator(".flash")).to_contain_text("Revised")
    expect(page.locator("table.versions tbody tr")).to_have_count(2)

    # Every visible form control has a label.
    unlabelled = page.evaluate(
        """[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
             .filter(e => !e.labels || e.labels.length === 0).map(e => e.id || e.name)"""
    )
    assert unlabelled == []
