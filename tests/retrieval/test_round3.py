"""Retrieval, round 3 on the real database: the keyword side's term counts and IDF, a note's context
(the note before it in its session), and when a note happened (docs/design.md, Retrieval)."""

from __future__ import annotations

from pathlib import Path

import httpx2
import psycopg
import pytest
from support.cli import run
from support.lorehttp import Server, start_server
from support.mcpclient import call, lore_session, ok, text

from lore.core.admission import NoteCandidate
from lore.core.session import Acting, Origin
from lore.embeddings.runner import Runner
from lore.service.memory import revise_note_in
from lore.store import context, keywords, notes, purge, search
from lore.store.vectors import embed_pending, reindex

ALPHA = Origin("alpha", "test", "/code/alpha")


def counts(conn: psycopg.Connection, *words: str) -> tuple[int, dict[str, int]]:
    keywords.compact(conn)  # the worker folds the changes writes append into the counts
    total = conn.execute(
        "SELECT coalesce(sum(notes), 0) FROM note_term_spaces WHERE space = 'alpha'"
    ).fetchone()
    rows = conn.execute(
        "SELECT lexeme, notes FROM note_terms WHERE space = 'alpha' AND lexeme = ANY(%s)", (list(words),)
    ).fetchall()
    assert total is not None
    return int(total[0]), {w: n for w, n in rows if n}


def test_term_counts_follow_writes_revisions_forgets_and_purges(conn: psycopg.Connection) -> None:
    first = notes.remember(conn, ALPHA, "Caroline planted sunflowers", title="Garden")
    notes.remember(conn, ALPHA, "Caroline went hiking")
    assert counts(conn, "carolin", "sunflow", "garden", "hike") == (
        2,
        {"carolin": 2, "sunflow": 1, "garden": 1, "hike": 1},
    )
    revise_note_in(conn, Acting(ALPHA, ("alpha",)), first.lineage, NoteCandidate("Caroline planted tulips"))
    assert counts(conn, "carolin", "sunflow", "tulip", "garden") == (2, {"carolin": 2, "tulip": 1})
    notes.forget(conn, ALPHA, ["alpha"], first.lineage, "wrong garden")
    assert counts(conn, "carolin", "tulip") == (1, {"carolin": 1})
    purge.purge(conn, f"n_{first.lineage + 1}", "test")  # the other note, erased for good
    assert counts(conn, "carolin", "hike") == (0, {})
    notes.remember(conn, ALPHA, "Roses again")
    # the context (weight D) never counts as the note's own words
    conn.execute("UPDATE notes SET context_before = 'tulips everywhere' WHERE superseded_at IS NULL")
    assert counts(conn, "tulip")[1] == {}


def test_a_rare_word_outranks_a_name_in_most_notes(conn: psycopg.Connection) -> None:
    """ts_rank alone (before this round) ranked the 12 notes titled "Caroline" above the one holding
    the rare word the question asks about (a title weighs 5 times a body, checked by hand); with
    each word weighed by how rare it is in the space, the rare one comes first."""
    for i in range(12):
        notes.remember(conn, ALPHA, f"Caroline talked with a friend about day {i}", title="Caroline")
    rare = notes.remember(conn, ALPHA, "Caroline said the sunflower painting took a week")
    found = search.keyword_candidates(conn, ["alpha"], "Caroline sunflower", model=None)
    assert found[0].lineage == rare.lineage
    assert len(found) == 13


def test_the_pool_takes_rare_words_first(conn: psycopg.Connection) -> None:
    common = [notes.remember(conn, ALPHA, f"deploy note number {i}").lineage for i in range(30)]
    rare = notes.remember(conn, ALPHA, "the helm chart lives in infra/").lineage
    small = search.keyword_candidates(conn, ["alpha"], "deploy helm", model=None, pool=5, depth=5)
    assert small[0].lineage == rare and len(small) == 5 and set(common) > {c.lineage for c in small[1:]}


def test_a_note_is_indexed_with_the_one_before_it_in_its_session(conn: psycopg.Connection) -> None:
    one, other = Origin("alpha", "test", "/w", session="s1"), Origin("alpha", "test", "/w", session="s2")
    question = notes.remember(conn, one, "Which database should the billing service use, Postgres or Mongo?")
    elsewhere = notes.remember(conn, other, "Lunch is at noon")
    answer = notes.remember(conn, one, "Yes, the first one.")
    unsessioned = notes.remember(conn, ALPHA, "A note from a command has no session")
    assert context.fill(conn) == 3
    rows = dict(
        (r[0], r[1:])
        for r in conn.execute(
            "SELECT lineage, context_before, context_after FROM notes WHERE superseded_at IS NULL"
        )
    )
    assert rows[answer.lineage] == (question.body, None)
    assert rows[question.lineage] == ("", answer.body)  # the next note's arrival reached it
    assert rows[elsewhere.lineage] == ("", None) and rows[unsessioned.lineage] == (None, None)
    assert notes.get(conn, ["alpha"], answer.lineage).body == "Yes, the first one."  # stored unchanged
    found = search.keyword_candidates(conn, ["alpha"], "billing database", model=None)
    assert [c.lineage for c in found] == [question.lineage, answer.lineage]  # its own words first
    # its vector is made of its text and its context, once the context is known
    runner = Runner({"LORE_EMBEDDER": "fake"})
    assert embed_pending(conn, runner) == 4
    # rebuilt by `lore reindex --all`
    conn.execute("UPDATE notes SET context_before = 'stale', context_after = 'stale' WHERE session = 's1'")
    conn.commit()
    assert reindex(conn, runner, everything=True) == 4
    again = conn.execute("SELECT context_before FROM notes WHERE lineage = %s", (answer.lineage,)).fetchone()
    assert again == (question.body,)


pytestmark = pytest.mark.anyio


async def test_mcp_sessions_give_notes_their_context_and_dates(
    tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "alpha"\npaths = ["{work}"]\n')
    env = {**lore_env, "LORE_EMBEDDER": "fake", "LORE_EMBED_POLL": "0.1"}
    async with lore_session(env, cwd=work) as s:
        await ok(
            s, "remember_note", body="We tried three caching layers for the search API", when="2023-05-08"
        )
        await ok(s, "remember_note", body="The second one fixed it", when="2023-05-08T13:56:00Z")
    async with lore_session(env, cwd=work) as s:
        await ok(s, "remember_note", body="Deploys go out on Fridays after the search API tests")
        await ok(s, "remember_note", body="The search API cache was tuned again", when="2024-01-03")
        found = await ok(s, "search_notes", query="what fixed the search API caching in May 2023?")
    conn.commit()
    sessions = conn.execute("SELECT DISTINCT session FROM notes").fetchall()
    assert len(sessions) == 2 and all(row[0] and len(row[0]) == 16 for row in sessions)
    hits = found.structured_content["results"]
    assert [h["id"] for h in hits[:2]] == ["n_2", "n_1"] or [h["id"] for h in hits[:2]] == ["n_1", "n_2"]
    assert hits[0]["when"] == "2023-05-08" and "[note, 2023-05-08]" in text(found)
    stored = conn.execute("SELECT happened_at::text FROM notes WHERE lineage = 2").fetchone()
    assert stored == ("2023-05-08 13:56:00+00",)
    bad = await _bad_when(env, work)
    assert "when is not an ISO 8601 date" in bad


async def _bad_when(env: dict[str, str], work: Path) -> str:
    async with lore_session(env, cwd=work) as s:
        return text(await call(s, "remember_note", body="x", when="last Tuesday"))


def test_the_cli_and_the_api_take_when(
    tmp_path: Path, lore_env: dict[str, str], conn: psycopg.Connection
) -> None:
    work = tmp_path / "w"
    work.mkdir()
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "alpha"\npaths = ["{work}"]\n')
    done = run("notes", "add", "Moved CI to the new runners", "--when", "2025-11-30", env=lore_env, cwd=work)
    assert done.returncode == 0, done.stderr
    server: Server
    with (
        start_server(lore_env, tmp_path / "serve.log") as server,
        httpx2.Client(headers=server.local()) as api,
    ):
        made = api.post(
            f"{server.url}/api/notes",
            json={"body": "Rolled the runners back", "when": "2025-12-01", "workspace": str(work)},
        )
        assert made.status_code == 201, made.text
        assert made.json()["note"]["happened_at"].startswith("2025-12-01")
        wrong = api.post(
            f"{server.url}/api/notes", json={"body": "x", "when": "soon", "workspace": str(work)}
        )
        assert wrong.status_code == 400 and "ISO 8601" in wrong.json()["hint"]
    conn.commit()
    rows = conn.execute("SELECT body, happened_at::date::text FROM notes ORDER BY lineage").fetchall()
    assert rows == [("Moved CI to the new runners", "2025-11-30"), ("Rolled the runners back", "2025-12-01")]
