"""The Tidy page (issue 28): near duplicates, likely conflicts and stale items of a space, each settled
with one act (merge, keep both, forget) that the audit records and the page can undo; and the Facts
page's form, which goes through the same write-time check as an agent's remember_fact. Local mode:
the only mode where a fact naming a file that is gone can be seen as stale (the paths are this
machine's)."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg
from playwright.sync_api import expect
from support.lorehttp import start_server

from lore.core.session import Origin
from lore.store import facts

from .conftest import Watched, link_from_log


def current(conn: psycopg.Connection) -> list[int]:
    return [r[0] for r in conn.execute("SELECT lineage FROM facts WHERE superseded_at IS NULL ORDER BY 1")]


def test_tidy_page_merges_keeps_forgets_and_undoes(
    lore_env: dict[str, str], tmp_path: Path, conn: psycopg.Connection, web: Watched
) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "proj"\npaths = ["{project}"]\n')
    agent = Origin("proj", "claude-code", str(project))
    for statement in (
        "Tests run with make test; they need Chromium.",
        "The tests are run with 'make test' and need chromium",
        "Deploys go to fly.io",
        "Deploys go to Render, not fly.io anymore",
        "The parser lives in src/old_parser.py",
    ):
        facts.remember(conn, agent, statement, subject=None if "parser" in statement else "proj")
    conn.commit()
    server = start_server({**lore_env, "LORE_EMBEDDER": "fake"}, tmp_path / "serve.log")
    try:
        page = web.page
        page.goto(link_from_log(server))
        page.get_by_role("button", name="Sign in on this computer").click()
        page.wait_for_url(re.compile(r"/spaces$"))

        # The Facts page's form: a copy of f_1 is not written again, and the fact's page says so.
        page.goto(f"{server.url}/facts?space=proj")
        page.get_by_label("Statement").fill("tests run with MAKE TEST - they need chromium")
        page.get_by_label("Subject").fill("proj")
        page.get_by_role("button", name="Remember").click()
        page.wait_for_url(re.compile(r"/facts/f_1\?said=duplicate"))
        expect(page.locator(".checked")).to_contain_text("Already remembered as f_1 in space proj")
        # ... in the web UI's own terms (issue 40, item 7): its button, not an agent's tool call
        expect(page.locator(".checked")).to_contain_text("To change it: “Save a new version” on f_1's page")
        expect(page.locator(".checked")).not_to_contain_text("revise_fact")
        assert current(conn) == [1, 2, 3, 4, 5]

        page.goto(f"{server.url}/tidy?space=proj")
        dupes = page.locator("section.duplicates")
        expect(dupes).to_have_count(1)
        expect(dupes.locator(".tidy-item a")).to_have_text(["f_2", "f_1"])
        conflict = page.locator("section.conflicts")
        expect(conflict.locator(".tidy-item a")).to_have_text(["f_4", "f_3"])
        stale = page.locator("li.is-stale")
        expect(stale).to_contain_text("names src/old_parser.py, which is gone")
        web.screenshot("tidy-page")

        # Merge the conflict into the newer fact (chosen by default): one current deploy fact.
        conflict.get_by_role("button", name="Merge into the chosen one").click()
        expect(page.locator(".flash")).to_contain_text("Done: merged f_3 into f_4")
        expect(page.locator("section.conflicts")).to_have_count(0)
        assert current(conn) == [1, 2, 4, 5]
        page.goto(f"{server.url}/facts/f_4")
        expect(page.locator(".merged")).to_contain_text("f_3: “Deploys go to fly.io”")

        # Undo it from the page: f_3 is believed again and the conflict is listed again.
        page.goto(f"{server.url}/tidy?space=proj")
        page.locator(".tidy-actions li", has_text="merged f_3 into f_4").get_by_role(
            "button", name="Undo"
        ).click()
        expect(page.locator("section.conflicts")).to_have_count(1)
        assert current(conn) == [1, 2, 3, 4, 5]

        # Keep both copies about tests (they are listed no more), forget the stale fact.
        page.locator("section.duplicates").get_by_role("button", name="Keep all").click()
        expect(page.locator("section.duplicates")).to_have_count(0)
        page.get_by_role("button", name="Forget f_5").click()
        expect(page.locator("li.is-stale")).to_have_count(0)
        assert current(conn) == [1, 2, 3, 4]
        reason = conn.execute("SELECT reason FROM forget_log WHERE lineage = 5").fetchone()
        assert reason is not None and reason[0].startswith("stale: names src/old_parser.py")
        acts = conn.execute("SELECT action, undone_at IS NOT NULL FROM tidy_actions ORDER BY id").fetchall()
        assert acts == [("merge", True), ("keep", False), ("forget", False)]
    finally:
        server.stop()
