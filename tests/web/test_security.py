"""What the UI must never do: run memory text as markup, accept a forged or cross-site form, show one
user another's memory, keep a session alive after sign-out or revocation. In a real Chromium."""

from __future__ import annotations

import re

import httpx2
import psycopg
from playwright.sync_api import expect

from lore.core.session import Origin
from lore.store import auth, notes

from .conftest import Team, Watched, sign_in
from .seed import seed

SCRIPT = '<script>alert("lore")</script><img src=x onerror="alert(2)">'


def test_a_note_holding_script_shows_as_text(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    origin = Origin("alice/work", "claude-code", str(team.project / "work"))
    note = notes.remember(
        conn, origin, f"Careful: {SCRIPT} is what the attacker sent", title=SCRIPT, tags=["<b>x</b>"]
    )
    conn.commit()
    sign_in(web, team.url, team.tokens["alice"], f"/notes/{note.id}")
    page = web.page
    expect(page.locator(".note-body")).to_have_text(f"Careful: {SCRIPT} is what the attacker sent")
    expect(page.get_by_role("heading", level=1)).to_contain_text(SCRIPT)
    expect(page.locator(".tag")).to_have_text("<b>x</b>")
    assert page.locator("main script, main img").count() == 0
    page.goto(f"{team.url}/notes?q=attacker")
    expect(page.locator(".result-title")).to_have_text(SCRIPT)
    # The search snippet comes from PostgreSQL's ts_headline, which drops tags; the words stay text.
    expect(page.locator(".snippet")).to_contain_text('Careful: alert("lore") is what the attacker sent')
    page.goto(f"{team.url}/notes")
    expect(page.locator(".snippet").first).to_contain_text(SCRIPT)
    page.wait_for_timeout(300)
    web.screenshot("script-note")
    # The `web` fixture asserts after the test: no dialog opened, no script error, no console error.


def test_forms_without_the_right_token_change_nothing(
    team: Team, conn: psycopg.Connection, web: Watched
) -> None:
    seeded = seed(conn, "alice", str(team.project))
    sign_in(web, team.url, team.tokens["alice"], f"/facts/{seeded.fact}")
    page = web.page
    csrf = page.locator('form[action$="/revise"] input[name=csrf]').get_attribute("value")
    assert csrf
    cookies = {c["name"]: c for c in page.context.cookies()}
    session = cookies["lore_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict" and session["path"] == "/"
    revise = f"{team.url}/facts/{seeded.fact}/revise"
    forged: list[tuple[dict[str, str | float | bool], dict[str, str]]] = [
        ({"statement": "forged"}, {}),  # no token
        ({"statement": "forged", "csrf": "x" * 43}, {}),  # a wrong one
        ({"statement": "forged", "csrf": csrf}, {"Origin": "http://evil.example"}),  # right one, other site
    ]
    for form, headers in forged:
        answer = page.request.post(revise, form=form, headers=headers, max_redirects=0)
        assert answer.status == 403, answer.status
        assert "security token" in answer.text()
    for path in (f"/notes/{seeded.note}/forget", f"/tasks/{seeded.task}", "/sign-out"):
        answer = page.request.post(team.url + path, form={"reason": "x", "action": "accept"}, max_redirects=0)
        assert answer.status == 403
    statements = conn.execute("SELECT statement FROM facts WHERE statement = 'forged'").fetchall()
    assert statements == [] and conn.execute("SELECT count(*) FROM forget_log").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM task_events WHERE source = 'web'").fetchone() == (0,)
    # The same request with the page's token goes through: the refusals above were about the token.
    answer = page.request.post(revise, form={"statement": "revised", "csrf": csrf}, max_redirects=0)
    assert answer.status == 303
    # A session cookie is no bearer token for the API.
    api = httpx2.get(f"{team.url}/api/me", headers={"Authorization": f"Bearer {session['value']}"})
    assert api.status_code == 401


def test_another_users_ids_are_not_found(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    bobs = seed(conn, "bob", str(team.project))
    seed(conn, "alice", str(team.project))
    sign_in(web, team.url, team.tokens["alice"])
    page = web.page
    for path in (f"/facts/{bobs.fact}", f"/notes/{bobs.note}", f"/notes/{bobs.linked}"):
        answer = page.goto(team.url + path)
        assert answer is not None and answer.status == 404, path
        expect(page.locator("main")).not_to_contain_text("bob")
    page.goto(f"{team.url}/facts/{bobs.fact}".replace(bobs.fact, "f_1"))  # alice's own ids still work
    csrf = page.locator("input[name=csrf]").first.get_attribute("value")
    assert csrf
    for path, form in [
        (f"/facts/{bobs.fact}/revise", {"statement": "hijacked"}),
        (f"/facts/{bobs.fact}/forget", {"reason": "hijack"}),
        (f"/notes/{bobs.note}/edit", {"body": "hijacked", "kind": "note"}),
        (f"/notes/{bobs.note}/forget", {"reason": "hijack"}),
        (f"/tasks/{bobs.task}", {"action": "accept"}),
    ]:
        posted = page.request.post(team.url + path, form={**form, "csrf": csrf}, max_redirects=0)
        assert posted.status == 404, (path, posted.status)
    for path in ("/facts", "/notes?q=deploy", "/tasks", "/messages", "/spaces"):
        page.goto(team.url + path)
        expect(page.locator("main")).not_to_contain_text("bob")
    assert page.goto(f"{team.url}/facts?space=bob/work").status == 404  # type: ignore[union-attr]
    changed = conn.execute("SELECT count(*) FROM facts WHERE space LIKE 'bob/%%' AND source = 'web'")
    assert changed.fetchone() == (0,)
    assert conn.execute("SELECT status FROM tasks WHERE lineage = %s", (int(bobs.task[2:]),)).fetchone() == (
        "inbox",
    )


def test_sign_out_and_revocation_end_the_session(team: Team, conn: psycopg.Connection, web: Watched) -> None:
    page = web.page
    sign_in(web, team.url, team.tokens["alice"])
    old = next(c for c in page.context.cookies() if c["name"] == "lore_session")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(re.compile(r"/sign-in\?signed_out=1"))
    assert not [c for c in page.context.cookies() if c["name"] == "lore_session"]
    # The old cookie, replayed, is dead on the server too (its row is revoked).
    replay = httpx2.get(f"{team.url}/facts", cookies={"lore_session": old["value"]})
    assert replay.status_code == 303 and replay.headers["location"].startswith("/sign-in")
    stored = conn.execute("SELECT hash, revoked_at IS NOT NULL FROM tokens WHERE client_id = 'lore-web'")
    assert stored.fetchall() == [(auth.digest(old["value"]), True)]  # only a hash was ever stored

    sign_in(web, team.url, team.tokens["alice"])
    row = conn.execute("SELECT id FROM tokens WHERE kind = 'personal' AND user_name = 'alice'").fetchone()
    assert row is not None
    (token_id,) = row
    auth.revoke(conn, token_id)
    conn.commit()
    page.goto(f"{team.url}/facts")
    page.wait_for_url(re.compile(r"/sign-in\?next=%2Ffacts"))
    page.get_by_label("Token").fill(team.tokens["alice"])
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.locator(".error")).to_have_text("That token is not valid.")
