"""What lore told your agent (issue "What lore told your agent, and why"): every session start is
recorded, by the hook's own psql after its read, and `lore log` shows exactly what was sent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import psycopg
import pytest
from integration.test_hook import context, hook
from support import cli

from lore.core import capture, spool
from lore.core.session import Origin
from lore.store import facts, handoffs, notes, purge


@pytest.fixture
def work(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    where = tmp_path / "acme-api"
    where.mkdir()
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'default_space = "other"\n[[space]]\nid = "work"\npaths = ["{where}"]\n'
        '[[space]]\nid = "other"\npaths = []\n[session_start]\nmax_chars = 600\n'
    )
    return where, lore_env


def _log(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return cli.run("log", *args, env=env, cwd=Path(env["HOME"]))


def test_the_hook_records_what_it_sent_and_lore_log_shows_it(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    here = Origin("work", "cli", str(where))
    made = [
        facts.remember(conn, here, f"fact number {i} about the deploy pipeline", subject="acme-api")
        for i in range(30)
    ]
    conn.commit()
    text = context(hook(env, {"cwd": str(where), "source": "startup", "session_id": "sess-42"}))
    listed = json.loads(_log(env, "--json").stdout)
    assert len(listed) == 1
    record = listed[0]
    assert record["client"] == "claude-code" and record["session_id"] == "sess-42" and record["via"] == "hook"
    assert record["space"] == "work" and record["workspace"] == str(where) and record["text"] == text
    assert record["shown"] and all(f"[{i} " in text or f"[{i}]" in text for i in record["shown"])
    assert set(record["shown"]) | set(record["cut"]) == {f.id for f in made}  # the budget cut the rest
    assert record["chars"] <= record["budget"] == 600
    shown = _log(env, "show", str(record["id"]))
    assert shown.returncode == 0 and shown.stdout.rstrip("\n").endswith(text)
    assert f"cut by the budget: {', '.join(record['cut'])}" in shown.stdout
    one = _log(env)
    assert f"#{record['id']}" in one.stdout and "claude-code" in one.stdout
    usage = cli.run("facts", "list", "--usage", env=env, cwd=where).stdout
    assert f"{record['shown'][0]:<8} shown in 1 session, last just now" in usage
    assert f"{record['cut'][0]:<8} shown in 0 sessions, cut 1 time" in usage

    # purged: gone from the record, its line out of the text
    victim = record["shown"][0]
    purge.purge(conn, victim, "tester")
    conn.commit()
    after = json.loads(_log(env, "show", str(record["id"]), "--json").stdout)
    assert victim not in after["shown"] and f"[{victim} " not in after["text"]


def test_a_record_that_cannot_be_written_never_costs_the_injection(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    facts.remember(conn, Origin("work", "cli", str(where)), "deploys with make ship")
    conn.execute("ALTER TABLE injections ADD CONSTRAINT no_more CHECK (false) NOT VALID")
    conn.commit()
    try:
        text = context(hook(env, {"cwd": str(where), "source": "startup"}))
        assert "make ship" in text
        lines = [
            json.loads(x) for x in (Path(env["LORE_DATA_DIR"]) / "logs" / "hook.log").read_text().splitlines()
        ]
        assert lines[-1]["event"] == "session-start" and lines[-1]["ok"]
        assert lines[-2]["event"] == "record" and not lines[-2]["ok"] and "no_more" in lines[-2]["detail"]
        assert len(spool.pending(env)) == 1  # the record waits on this machine
    finally:
        conn.execute("ALTER TABLE injections DROP CONSTRAINT no_more")
        conn.commit()
    # The next lore process that can write writes it (here `lore log` itself), once.
    listed = json.loads(_log(env, "--json").stdout)
    assert [(r["kind"], r["outcome"], r["text"]) for r in listed] == [("session-start", "shown", text)]
    assert spool.pending(env) == []
    assert len(json.loads(_log(env, "--json").stdout)) == 1


def test_records_past_the_retention_are_deleted_by_lore(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    facts.remember(conn, Origin("work", "cli", str(where)), "deploys with make ship")
    conn.commit()
    context(hook(env, {"cwd": str(where), "source": "startup"}))
    conn.execute("UPDATE injections SET at = now() - interval '91 days'")
    conn.commit()
    context(hook(env, {"cwd": str(where), "source": "startup"}))
    assert conn.execute("SELECT count(*), min(at) > now() - interval '1 day' FROM injections").fetchone() == (
        1,
        True,
    )


def test_a_handoff_has_one_id_in_the_record_and_in_the_text(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    """Before: `lore log show` said "led with handoff 1" (the handoffs row) while the text it showed
    said "(handoff n_3)" (its note): one handoff, two ids. Now `n_3` wherever it is shown."""
    where, env = work
    here = Origin("work", "cli", str(where))
    for body in ("a note before", "and another"):  # the handoff's note is then n_3, its row 1
        notes.remember(conn, here, body)
    conn.commit()
    h = capture.Handoff(
        "work", "codex", "s1", str(where), str(where), "acme-api", "Stop", "Fixed the login.", 16, None, None
    )
    row = handoffs.record(conn, h)
    assert (row.id, row.note_id) == (1, "n_3")
    text = context(hook(env, {"cwd": str(where), "source": "startup", "session_id": "s2"}))
    assert "(handoff n_3)" in text
    record = json.loads(_log(env, "--json").stdout)[0]
    assert record["handoff"] == "n_3"
    shown = _log(env, "show", str(record["id"]))
    assert "led with handoff n_3" in shown.stdout and "handoff 1" not in shown.stdout
    assert json.loads(_log(env, "show", str(record["id"]), "--json").stdout)["handoff"] == "n_3"


def test_the_record_says_what_was_folded_apart_from_what_the_budget_cut(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    """Issue 40, item 5: the record of a session start listed the copies it folded under "cut by the
    budget" (1,089 of 8,000 characters used)."""
    where, env = work
    here = Origin("work", "cli", str(where))
    first = facts.remember(conn, here, "Tests run with make test; they need Chromium.", subject="acme-api")
    copy = facts.remember(
        conn, here, "The tests are run with 'make test' and need chromium", subject="acme-api"
    )
    other = facts.remember(conn, here, "Deploys go to fly.io", subject="acme-api")
    conn.commit()
    started = cli.run("session-start", "--client", "claude-code", env=env, cwd=where)
    assert started.returncode == 0 and f"(+1 similar: {first.id})" in started.stdout
    record = json.loads(_log(env, "--json").stdout)[0]
    assert record["shown"] == [other.id, copy.id] and record["cut"] == []
    assert record["folded"] == [[first.id, copy.id]]
    shown = _log(env, "show", str(record["id"])).stdout
    assert f"cut by the budget: none; folded as similar ({first.id} into {copy.id})" in shown
    assert "1 folded" in _log(env).stdout
    usage = cli.run("facts", "list", "--usage", env=env, cwd=where).stdout
    assert f"{first.id:<8} never shown nor returned yet" in usage  # folded is not "cut"
    # purged: the fold that named it leaves the record too (it stayed in `cut` as `f_1>f_2`)
    purge.purge(conn, first.id, "tester")
    conn.commit()
    after = json.loads(_log(env, "show", str(record["id"]), "--json").stdout)
    assert after["folded"] == [] and first.id not in json.dumps(after)
