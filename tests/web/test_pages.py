"""The main pages in a real Chromium, signed in with a token: spaces, search (the same results as
`search_notes`), a note's graph, a fact revised and both versions on its timeline, the inbox
accepted and rejected, messages by thread. Each page leaves a screenshot in tests/artifacts/."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import anyio
import psycopg
import pytest
from playwright.sync_api import expect
from support.lorehttp import bearer, mcp_session, push
from support.mcpclient import ok

from .conftest import Team, Watched, sign_in, wait_embedded
from .seed import seed


def test_spaces_search_and_note_graph(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    seeded = seed(conn, "alice", str(team.project))
    sign_in(web, team.url, team.tokens["alice"])
    page = web.page
    expect(page.get_by_role("heading", name="Spaces", exact=True)).to_be_visible()
    expect(page.locator(".who")).to_have_text("alice")
    # work reads home; home may write into work (work's accepts_from): one arrow each, drawn.
    expect(page.locator('svg .flow-reads[data-from="work"][data-to="home"]')).to_have_count(1)
    expect(page.locator('svg .flow-writes[data-from="home"][data-to="work"]')).to_have_count(1)
    expect(page.locator("section.space").first).to_contain_text("github.com/acme/*")
    page.get_by_label("Which space does a directory get?").fill(str(team.project / "work" / "src"))
    page.get_by_role("button", name="Check").click()
    expect(page.locator(".which-result")).to_contain_text("space work")
    web.screenshot("spaces")

    wait_embedded(conn)  # so that the UI and the MCP search below see the same vectors
    page.get_by_role("link", name="Notes", exact=True).click()
    page.get_by_label("Search").fill("deploy rollback")
    page.get_by_role("button", name="Search").click()
    expect(page.locator(".result-title").first).to_have_text("How we deploy")
    shown = page.locator(".result .meta").all_inner_texts()
    web.screenshot("notes-search")

    page.locator(".result-title").first.click()
    page.wait_for_url(re.compile(f"/notes/{seeded.note}$"))
    expect(page.locator("svg.graph .edge")).to_have_count(3)
    expect(page.locator('svg.graph .edge[data-relation="depends_on"]')).to_have_count(1)
    expect(page.locator(f'svg.graph a[href="/notes/{seeded.linked}"]')).to_have_count(1)
    expect(page.locator("ul.links")).to_contain_text("Rollbacks refines this")
    web.screenshot("note")

    # The very same search through MCP (a session of `work`, which reads work + home): same hits.
    ids = [line.split(" · ")[0] for line in shown]

    async def via_mcp() -> list[str]:
        async with mcp_session(team.url, bearer(team.tokens["alice"], team.project / "work")) as s:
            result = await ok(s, "search_notes", query="deploy rollback", limit=20)
            return [hit["id"] for hit in result.structured_content["results"]]

    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API owns this thread's event loop
        assert pool.submit(anyio.run, via_mcp).result(timeout=60) == ids


def test_revise_a_fact_and_see_both_versions(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    seeded = seed(conn, "alice", str(team.project))
    sign_in(web, team.url, team.tokens["alice"], "/facts")
    page = web.page
    fact = page.locator("li.fact", has_text="deploys with make ship")
    # the statement as written, its id and dates beside it (not the agents' `[f_1 · ...]` suffix)
    expect(fact.locator(".fact-line")).to_have_text("alice's acme-api deploys with make ship")
    expect(fact.locator(".meta")).to_contain_text(
        f"{seeded.fact} · about work · true from 2026-01-05 · claude-code"
    )
    fact.locator("summary").click()
    expect(fact.locator("svg.timeline g.tl-row")).to_have_count(1)
    web.screenshot("facts")
    fact.get_by_role("link", name=re.compile("History, revise and forget")).click()
    page.wait_for_url(re.compile(f"/facts/{seeded.fact}$"))
    expect(page.locator("h1.fact-line")).to_have_text("alice's acme-api deploys with make ship")
    # The workspace wraps at its slashes, never inside a folder's name.
    where = page.locator("code.path").first
    expect(where).to_have_text(f"{team.project}/work")
    assert where.evaluate("e => getComputedStyle(e).overflowWrap") == "break-word"
    assert where.inner_html().count("<wbr>") == str(team.project / "work").count("/")

    page.get_by_label("Statement").fill("alice's acme-api deploys with make release")
    page.get_by_role("button", name="Save a new version").click()
    expect(page.locator(".flash")).to_contain_text("Revised")
    rows = page.locator("svg.timeline g.tl-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_have_class(re.compile("tl-superseded"))
    expect(rows.nth(0).locator(".tl-label")).to_contain_text("v1 · alice's acme-api deploys with make ship")
    expect(rows.nth(1)).to_have_class(re.compile("tl-current"))
    expect(rows.nth(1).locator(".tl-label")).to_contain_text("v2 · alice's acme-api deploys with make rel")
    # Both axes: each version has a belief bar and a validity bar.
    expect(page.locator("svg.timeline rect.tl-believed")).to_have_count(2)
    expect(page.locator("svg.timeline rect.tl-valid")).to_have_count(2)
    expect(page.locator("table.versions tbody tr")).to_have_count(2)
    web.screenshot("fact")
    versions = conn.execute(
        "SELECT statement, source, superseded_at IS NULL FROM facts WHERE lineage = %s ORDER BY version_id",
        (int(seeded.fact[2:]),),
    ).fetchall()
    assert versions == [
        ("alice's acme-api deploys with make ship", "claude-code", False),
        ("alice's acme-api deploys with make release", "web", True),
    ]

    page.get_by_label("Why").fill("we moved to GitHub Actions")
    page.get_by_role("button", name=f"Forget {seeded.fact}").click()
    page.wait_for_url(re.compile(r"/facts\?space=work&done=forgotten"))
    expect(page.locator("ul.forgotten")).to_contain_text("we moved to GitHub Actions")
    expect(page.locator("li.fact", has_text="make release")).to_have_count(0)


def test_inbox_accept_reject_and_threads(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    seeded = seed(conn, "alice", str(team.project))
    sign_in(web, team.url, team.tokens["alice"], "/tasks?space=work")
    page = web.page
    inbox = page.locator(".tasks .task.card")
    expect(inbox).to_have_count(2)
    web.screenshot("tasks")
    page.locator(f"#task-{seeded.task}").get_by_role("button", name="Accept").click()
    expect(page.locator(".flash")).to_contain_text("Accepted")
    expect(page.locator(f".tasks.compact #task-{seeded.task}")).to_be_visible()  # now under Todo
    rejecting = page.locator(f"#task-{seeded.other_task}")
    rejecting.get_by_label("Note").fill("not this year")
    rejecting.get_by_role("button", name="Reject").click()
    expect(page.locator(".flash")).to_contain_text("Rejected")
    expect(page.locator(".tasks .task.card")).to_have_count(0)
    states = conn.execute("SELECT lineage, status FROM tasks ORDER BY lineage").fetchall()
    assert states == [(int(seeded.task[2:]), "todo"), (int(seeded.other_task[2:]), "done")]
    notes = [r[0] for r in conn.execute("SELECT note FROM task_events WHERE source = 'web' ORDER BY id")]
    assert notes == ["accepted in the web UI", "rejected in the web UI: not this year"]

    page.get_by_role("link", name="Messages", exact=True).click()
    thread = page.locator("section.thread")
    expect(thread).to_have_count(1)
    expect(thread.locator("li.message")).to_have_count(2)
    expect(thread.locator("li.message").nth(0)).to_contain_text("Is the deploy freeze still on")
    expect(thread.locator("li.message").nth(1)).to_contain_text("Yes, until Friday.")
    web.screenshot("messages")
    # Looking is not reading: agents still get the unread message.
    assert conn.execute("SELECT count(*) FROM messages WHERE read_at IS NULL").fetchone() == (2,)


@pytest.mark.parametrize("path", ["/spaces", "/facts", "/notes", "/tasks", "/messages"])
def test_every_page_answers_for_a_new_user(team: Team, web: Watched, path: str) -> None:
    """Bob has pushed a config but stored nothing yet: every page still renders, empty."""
    sign_in(web, team.url, team.tokens["bob"], path)
    expect(web.page.locator("main h1")).to_be_visible()
    unlabelled = web.page.evaluate(
        """[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
             .filter(e => !e.labels || e.labels.length === 0).map(e => e.id || e.name)"""
    )
    assert unlabelled == []  # every form control has a label


README_CONFIG = """default_space = "personal"
[[space]]
id = "personal"
paths = ["~/dotfiles"]
[[space]]
id = "acme"
paths = ["~/codes/acme-*"]
remotes = ["github.com/acme/*"]
reads_from = ["personal"]
accepts_from = ["personal", "oss"]
[[space]]
id = "oss"
paths = ["~/oss"]
reads_from = ["personal"]
"""


def test_readme_screenshot(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    """The picture in the README (docs/screenshots/ holds a copy): a fact revised by one agent after
    another wrote it, with its history on both time axes."""
    from datetime import UTC, datetime

    from support.lorehttp import push

    from lore.core.admission import FactCandidate
    from lore.core.session import Acting, Origin
    from lore.service import memory
    from lore.store import facts

    push(conn, "alice", README_CONFIG, home="/home/alice")
    ws = "/home/alice/codes/acme-api"
    first = Origin("alice/acme", "claude-code", ws)
    fact = facts.remember(
        conn,
        first,
        "acme-api deploys with make ship",
        subject="acme-api",
        valid_from=datetime(2026, 3, 2, tzinfo=UTC),
    )
    facts.remember(conn, first, "Staging is refreshed from production every Monday night")
    facts.remember(conn, Origin("alice/acme", "gemini-cli", ws), "acme-web needs Node 22 (see .nvmrc)")
    conn.commit()
    memory.revise_in(
        conn,
        Acting(Origin("alice/acme", "codex", ws), ("alice/acme",)),
        fact.lineage,
        FactCandidate(
            "acme-api deploys with make release; make ship is retired",
            None,
            datetime(2026, 11, 2, tzinfo=UTC),
        ),
    )
    conn.commit()
    sign_in(web, team.url, team.tokens["alice"], f"/facts/{fact.id}")
    expect(web.page.locator("svg.timeline g.tl-row")).to_have_count(2)
    web.page.set_viewport_size({"width": 1180, "height": 720})
    web.screenshot("readme-fact", full_page=False)
    web.page.goto(f"{team.url}/spaces")
    web.screenshot("readme-spaces", full_page=False)


def test_edit_link_and_forget_a_note(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    seeded = seed(conn, "alice", str(team.project))
    sign_in(web, team.url, team.tokens["alice"], f"/notes/{seeded.linked}")
    page = web.page
    page.get_by_label("Title").fill("Migrations stay backwards compatible")
    page.get_by_label("Tags").fill("db, Release")
    page.get_by_role("button", name="Save a new version").click()
    expect(page.locator(".flash")).to_contain_text("Saved a new version")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Migrations stay backwards compatible")
    expect(page.locator(".tag")).to_have_text(["db", "release"])

    page.get_by_label("Direction").select_option("incoming")
    page.get_by_label("Relation").select_option("blocks")
    page.get_by_label("Other note (same space)").fill(seeded.task)
    page.get_by_role("button", name="Link", exact=True).click()
    expect(page.locator(".flash")).to_have_text("Linked.")
    expect(page.locator("ul.links")).to_contain_text("Bump the base image blocks this")

    page.get_by_label("Why").fill("superseded by the migration guide")
    page.get_by_role("button", name=f"Forget {seeded.linked}").click()
    page.wait_for_url(re.compile(r"/notes\?space=work&done=forgotten"))
    expect(page.locator(".result-title", has_text="Migrations stay")).to_have_count(0)
    lineage = int(seeded.linked[2:])
    rows = conn.execute(
        "SELECT title, source, superseded_at IS NULL FROM notes WHERE lineage = %s ORDER BY version_id",
        (lineage,),
    ).fetchall()
    assert rows == [
        ("Migrations stay compatible", "claude-code", False),
        ("Migrations stay backwards compatible", "web", False),
    ]
    edges = conn.execute("SELECT from_note, relation, to_note FROM edges WHERE source = 'web'").fetchall()
    assert edges == [(int(seeded.task[2:]), "blocks", lineage)]
    assert conn.execute("SELECT reason FROM forget_log").fetchall() == [
        ("superseded by the migration guide",)
    ]


def test_facts_opens_on_the_space_written_to_last(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    """No `?space=`: Facts shows the space the person's agents wrote to most recently (here `home`,
    not the default `work`), and the header says which space it is."""
    from lore.core.session import Origin
    from lore.store import facts

    seed(conn, "alice", str(team.project))
    facts.remember(conn, Origin("alice/home", "codex", str(team.project / "home")), "The laptop runs NixOS")
    conn.commit()
    sign_in(web, team.url, team.tokens["alice"], "/facts")
    page = web.page
    expect(page.get_by_role("heading", level=1)).to_have_text("Facts in home")
    expect(page.locator("li.fact", has_text="The laptop runs NixOS")).to_have_count(1)
    expect(page.locator("li.fact", has_text="deploys with make ship")).to_have_count(0)
    page.goto(f"{team.url}/facts?space=work")
    expect(page.get_by_role("heading", level=1)).to_have_text("Facts in work")


def test_no_flows_no_empty_picture_and_notes_say_their_space(
    team: Team, conn: psycopg.Connection, web: Watched
) -> None:
    """Papercuts a new user hit: the spaces picture was a large empty box when no space reads from
    another, and Notes lacked the "in SPACE" its sibling pages have."""
    push(conn, "bob", 'default_space = "solo"\n[[space]]\nid = "solo"\n[[space]]\nid = "side"\n')
    sign_in(web, team.url, team.tokens["bob"], "/spaces")
    page = web.page
    expect(page.locator("svg.spaces-map")).to_have_count(0)
    expect(page.locator("p.no-flows")).to_contain_text("No space reads from or writes into another")
    page.goto(team.url + "/notes")
    expect(page.locator("main h1")).to_have_text("Notes in all your spaces")
    page.goto(team.url + "/notes?space=side")
    expect(page.locator("main h1")).to_have_text("Notes in side")
    web.screenshot("spaces-no-flows")
