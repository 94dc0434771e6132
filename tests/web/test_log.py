"""What agents were told, in the web UI and over /api, per user: a signed-in user sees the record of
their own sessions only (issue "What lore told your agent": privacy)."""

from __future__ import annotations

import httpx2
from support.lorehttp import bearer

from .conftest import Team, Watched, sign_in


def test_a_user_sees_their_own_record_and_never_anothers(team: Team, web: Watched) -> None:
    work = team.project / "work"
    alice, bob = bearer(team.tokens["alice"], work), bearer(team.tokens["bob"], work)
    fact = httpx2.post(
        f"{team.url}/api/facts", json={"statement": "alice deploys with make ship"}, headers=alice
    )
    assert fact.status_code == 201, fact.text
    started = httpx2.get(
        f"{team.url}/api/session-start", params={"client": "claude-code", "session_id": "a1"}, headers=alice
    )
    assert started.status_code == 200 and "make ship" in started.json()["text"]
    record = started.json()["record"]
    mine = httpx2.get(f"{team.url}/api/log", headers=alice).json()["records"]
    assert [r["id"] for r in mine] == [record] and mine[0]["text"] == started.json()["text"]
    assert mine[0]["session_id"] == "a1" and mine[0]["space"] == "alice/work"
    assert httpx2.get(f"{team.url}/api/log", headers=bob).json()["records"] == []
    theirs = httpx2.get(f"{team.url}/api/log/{record}", headers=bob)
    assert theirs.status_code == 404 and "make ship" not in theirs.text

    sign_in(web, team.url, team.tokens["bob"], f"/log/{record}")
    assert "make ship" not in web.page.content()
    assert web.page.get_by_text(f"No injection record {record} in your spaces.").is_visible()
    web.page.goto(f"{team.url}/log")
    assert "make ship" not in web.page.content() and f"#{record}" not in web.page.content()

    web.page.context.clear_cookies()
    sign_in(web, team.url, team.tokens["alice"], f"/log/{record}")
    assert web.page.locator("pre.injected").inner_text().strip() == started.json()["text"].strip()
    web.page.goto(f"{team.url}/log?space=work")
    assert web.page.get_by_role("link", name=f"#{record}").is_visible()
    web.screenshot("log")
