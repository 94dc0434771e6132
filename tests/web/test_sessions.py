"""The Sessions page in a real Chromium: a space's handoffs as a timeline by day, each agent's
session with its final message, its changes and the tasks it touched; another user's never."""

from __future__ import annotations

import psycopg
from playwright.sync_api import expect
from support import handoffs as written_handoffs

from lore.core import capture

from .conftest import Team, Watched, sign_in


def _handoff(
    space: str, client: str, session: str, message: str, changed: int, untracked: int = 0
) -> capture.Handoff:
    tracked = changed - untracked  # git's diff summary counts these only
    lines = [f" M src/file{i}.py" for i in range(tracked)] + [f"?? new{i}.txt" for i in range(untracked)]
    stat = (
        f" {tracked} file{'s' if tracked != 1 else ''} changed, {3 * tracked} insertions(+)"
        if tracked
        else None
    )
    return capture.Handoff(
        space=space,
        client=client,
        session_id=session,
        root="/home/alice/proj/work",
        workspace="/home/alice/proj/work",
        workspace_name="work",
        event="Stop",
        message=message,
        message_chars=len(message),
        changes=capture.Changes(lines, changed, stat),
        started_at=None,
    )


def test_the_timeline_shows_each_agents_sessions_and_only_the_viewers(
    team: Team, conn: psycopg.Connection, web: Watched
) -> None:
    written_handoffs.record(
        conn, _handoff("alice/work", "claude-code", "s-1", "Fixed the login redirect.", 2)
    )
    written_handoffs.record(
        conn, _handoff("alice/work", "codex", "s-2", "Migrated the users table.\nBackfill next.", 0)
    )
    written_handoffs.record(
        conn, _handoff("alice/work", "claude-code", "s-1", "Fixed login and logout.", 3, untracked=2)
    )  # same session
    written_handoffs.record(conn, _handoff("bob/work", "gemini", "s-3", "BOB-ONLY: secret plans", 1))

    sign_in(web, team.url, team.tokens["alice"])
    page = web.page
    page.get_by_role("link", name="Sessions", exact=True).click()
    expect(page.get_by_role("heading", name="Sessions in work")).to_be_visible()
    expect(page.locator(".agents .agent")).to_have_count(
        2
    )  # claude-code 1, codex 1: the update is no new one
    entries = page.locator("ol.timeline li.handoff")
    expect(entries).to_have_count(2)
    expect(entries.first).to_have_attribute("data-client", "claude-code")  # the most recently updated first
    expect(entries.first.locator(".handoff-message")).to_have_text("Fixed login and logout.")
    expect(entries.first).to_contain_text("(2 updates)")
    # three changed files, two of them untracked (not in git's "1 file changed" summary): said
    expect(entries.first.locator("summary")).to_have_text(
        "3 changed files (1 file changed, 3 insertions(+); 2 untracked)"
    )
    expect(entries.nth(1)).to_contain_text("No uncommitted changes.")
    note = entries.first.locator("a[href^='/notes/n_']")
    expect(note).to_have_count(1)
    assert "BOB-ONLY" not in page.content()
    web.screenshot("sessions")

    note.click()  # the handoff is a note like any other
    expect(page.locator(".note-body")).to_contain_text("Final message:\nFixed login and logout.")

    page.goto(team.url + "/sessions?space=home")
    expect(page.locator("p.empty")).to_contain_text("No sessions recorded here yet")
