"""Local mode (`make run`): loopback only, and the UI still needs a sign-in: the one-time link that
`lore serve` prints in its own terminal, or a token from `lore token create`."""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import psycopg
from playwright.sync_api import expect
from support.lorehttp import start_server, token

from .conftest import Watched, link_from_log


def test_one_time_link_and_loopback_only(
    lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection, web: Watched
) -> None:
    project = tmp_path / "code" / "api"
    project.mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        'default_space = "personal"\n'
        f'[[space]]\nid = "personal"\npaths = ["{tmp_path}/gone"]\n'
        f'[[space]]\nid = "api"\npaths = ["{project}"]\nreads_from = ["personal"]\n'
    )
    server = start_server({**lore_env, "LORE_EMBEDDER": "fake"}, tmp_path / "serve.log")
    try:
        link = link_from_log(server)
        assert link.startswith(f"{server.url}/sign-in?code=")
        page = web.page
        answer = page.goto(f"{server.url}/facts")
        assert answer is not None and page.url.startswith(f"{server.url}/sign-in")  # no open UI
        page.goto(link)
        page.get_by_role("button", name="Sign in on this computer").click()
        page.wait_for_url(re.compile(r"/spaces$"))
        expect(page.locator(".who")).to_have_text("local")
        personal = page.locator("section.space", has_text="personal")
        expect(personal.locator(".stale")).to_have_text("no longer exists")  # the path that vanished
        expect(page.locator("section.space", has_text="api").locator(".stale")).to_have_count(0)
        expect(page.locator('svg .flow-reads[data-from="api"][data-to="personal"]')).to_have_count(1)

        # The link works once: a second browser gets told, and a cookie of another Host is useless.
        other = page.context.browser.new_context()  # type: ignore[union-attr]
        try:
            second = other.new_page()
            second.goto(link)
            second.get_by_role("button", name="Sign in on this computer").click()
            expect(second.locator(".error")).to_contain_text("used already")
            second.get_by_label("Token").fill(token(conn, "me"))  # a token from `lore token create`
            second.get_by_role("button", name="Sign in", exact=True).click()
            second.wait_for_url(re.compile(r"/spaces$"))
            expect(second.locator(".who")).to_have_text("me")
        finally:
            other.close()
        rebound = httpx2.get(f"{server.url}/sign-in", headers={"Host": "evil.example"})
        assert rebound.status_code == 403  # DNS rebinding: a page of another site gets nothing
    finally:
        server.stop()
