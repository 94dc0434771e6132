"""Handoffs on the real database, written by the real `lore hook session-end` process and read by
the real session-start hook (docs/design.md, Handoffs): one per session, updated and never
duplicated; credentials redacted; the transcript read when the event has no message; the tasks a
session touched; expiry from session start only; search, forget, purge; the psycopg side agrees."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from support import envelope
from unit.test_hook_imports import HEAVY, hook_imports

from lore.core import render, session_start, spool
from lore.core.config import load_config
from lore.core.session import Origin, build
from lore.core.workspace import WorkspaceSignal
from lore.store import handoffs, purge, search, snapshot, tasks

LORE = str(Path(sys.executable).parent / "lore")
TOKEN = "ghp_" + "Zq9x" * 9


@pytest.fixture
def setup(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    """`acme-api`, a git repository of space `work` with one changed and one new file; `other` in
    space `other`."""
    work = tmp_path / "codes" / "acme-api"
    work.mkdir(parents=True)
    (tmp_path / "other").mkdir()
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.test"]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "app.py").write_text("print(1)\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "first"], check=True)
    (work / "app.py").write_text("print(2)\nprint(3)\n")
    (work / "todo.txt").write_text("later")
    Path(lore_env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "work"\npaths = ["{tmp_path}/codes/acme-*"]\n\n'
        f'[[space]]\nid = "other"\npaths = ["{tmp_path}/other"]\n'
    )
    return work, lore_env


def hook(env: dict[str, str], event: str, payload: dict[str, Any], client: str = "claude-code") -> str:
    done = subprocess.run(
        [LORE, "hook", event, "--client", client],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return done.stdout


def stop(work: Path, message: str | None, session: str = "s-1", **extra: Any) -> dict[str, Any]:
    payload = {"session_id": session, "cwd": str(work), "hook_event_name": "Stop", **extra}
    if message is not None:
        payload["last_assistant_message"] = message
    return payload


def start_text(env: dict[str, str], cwd: Path, client: str = "claude-code") -> str:
    out = hook(env, "session-start", {"session_id": "next", "cwd": str(cwd), "source": "startup"}, client)
    if not out:
        return ""
    text: str = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    return text


def log_lines(env: dict[str, str]) -> list[dict[str, Any]]:
    """The hook log's entries (the log of the test session's data dir: earlier tests' too)."""
    path = Path(env["LORE_DATA_DIR"]) / "logs" / "hook.log"
    raw = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line) for line in raw]


def versions(conn: psycopg.Connection) -> list[tuple[int, bool]]:
    rows = conn.execute(
        "SELECT lineage, superseded_at IS NULL FROM notes WHERE kind = 'handoff' ORDER BY version_id"
    )
    return [(int(r[0]), bool(r[1])) for r in rows]


def test_one_handoff_per_session_updated_not_duplicated(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    earlier = len(log_lines(env))  # what other tests of this worker logged: not ours
    assert hook(env, "session-end", stop(work, "MARKER-ONE: fixed the login")) == ""  # prints nothing
    assert hook(env, "session-end", {**stop(work, None), "hook_event_name": "SessionEnd"}) == ""
    rows = conn.execute(
        "SELECT session_id, event, events, message, changed, changes FROM handoffs"
    ).fetchall()
    # the SessionEnd without a message kept the Stop's; the note got no second version
    assert rows == [("s-1", "SessionEnd", 2, "MARKER-ONE: fixed the login", 2, [" M app.py", "?? todo.txt"])]
    assert versions(conn) == [(1, True)]

    hook(env, "session-end", stop(work, "MARKER-TWO: and the logout"))
    assert conn.execute("SELECT count(*), max(events) FROM handoffs").fetchone() == (1, 3)
    assert versions(conn) == [(1, False), (1, True)]  # revised: same lineage, the old version closed

    hook(env, "session-end", stop(work, "MARKER-THREE", session="s-2"), client="codex")
    assert conn.execute("SELECT count(*) FROM handoffs").fetchone() == (2,)
    text = start_text(env, work)
    assert "Last session here: codex" in text and "> MARKER-THREE" in text and "MARKER-TWO" not in text
    ends = [e for e in log_lines(env)[earlier:] if e["event"] == "session-end"]
    assert [e["ok"] for e in ends] == [True] * 4 and "update 3" in ends[2]["detail"]


def test_the_next_session_here_leads_with_it_and_another_space_never_sees_it(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    hook(env, "session-end", stop(work, "MARKER-LEAD: the migration is half done\nsecond line"))
    (work / "src").mkdir()
    text = start_text(env, work / "src")  # a subfolder of the repository is "here" too
    assert envelope.opens(text, "work")
    assert "Last session here: claude-code, just now (handoff n_1)." in text
    assert "> MARKER-LEAD: the migration is half done" in text
    assert "2 changed files (1 file changed, 2 insertions(+), 1 deletion(-); 1 untracked)." in text
    elsewhere = start_text(env, work.parent.parent / "other")
    assert "MARKER" not in elsewhere and elsewhere.startswith("lore: no memory stored in space other yet")
    started = [e for e in log_lines(env) if e["event"] == "session-start"][-2]
    assert "last session" in started["detail"]


def test_credentials_are_redacted_everywhere(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    (work / f"leak-{TOKEN}.txt").write_text("x")  # even a file name
    hook(env, "session-end", stop(work, f"Pushed with token {TOKEN}; done."))
    stored = json.dumps(conn.execute("SELECT row_to_json(h) FROM handoffs h").fetchone()[0])  # type: ignore[index]
    notes_text = json.dumps(conn.execute("SELECT array_agg(body) FROM notes").fetchone()[0])  # type: ignore[index]
    for where in (
        stored,
        notes_text,
        start_text(env, work),
        (Path(env["LORE_DATA_DIR"]) / "logs" / "hook.log").read_text(),
    ):
        assert TOKEN not in where
    assert "[redacted: GitHub token]" in stored and "[redacted: GitHub token]" in notes_text


def test_the_final_message_comes_from_the_transcript_when_the_event_has_none(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection, tmp_path: Path
) -> None:
    work, env = setup
    transcript = tmp_path / "t.jsonl"
    lines = [
        {"type": "user", "message": {"content": "go"}, "timestamp": "2026-01-01T08:00:00.000Z"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "MARKER-TRANSCRIPT done"}]}},
    ]
    transcript.write_text("\n".join(json.dumps(x) for x in lines))
    end = {
        "session_id": "s-t",
        "cwd": str(work),
        "hook_event_name": "SessionEnd",
        "transcript_path": str(transcript),
    }
    hook(env, "session-end", end)
    row = conn.execute("SELECT message, started_at::date::text FROM handoffs").fetchone()
    assert row == ("MARKER-TRANSCRIPT done", "2026-01-01")  # and the session's start, from its first line
    assert "(from the transcript)" in log_lines(env)[-1]["detail"]


def test_tasks_touched_and_tasks_in_doing(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    config = load_config(env)
    here = Origin("work", "claude-code", str(work))
    before = tasks.file(conn, config, here, "work", "Older task", "filed before the session")
    conn.execute(
        "UPDATE notes SET recorded_at = now() - interval '2 days' WHERE lineage = %s", (before.lineage,)
    )
    conn.commit()
    hook(env, "session-end", stop(work, "first turn"))  # the session's row: it started now
    task = tasks.file(conn, config, here, "work", "Fix login", "the redirect loops")
    tasks.update(conn, here, ["work"], task.lineage, "doing")
    elsewhere = tasks.file(conn, config, Origin("work", "cli", "/somewhere/else"), "work", "Unrelated", "x")
    conn.commit()
    hook(env, "session-end", stop(work, "second turn"))
    assert conn.execute("SELECT tasks FROM handoffs").fetchone() == ([task.lineage],)
    assert elsewhere.lineage not in conn.execute("SELECT tasks FROM handoffs").fetchone()[0]  # type: ignore[index]
    text = start_text(env, work)
    assert f"Doing: n_{task.lineage} Fix login." in text
    body = conn.execute("SELECT body FROM notes WHERE kind = 'handoff' AND superseded_at IS NULL").fetchone()
    assert body is not None and f"Tasks touched: n_{task.lineage}" in body[0]


def test_old_handoffs_expire_from_session_start_not_from_the_store(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    hook(env, "session-end", stop(work, "MARKER-OLD"))
    conn.execute(
        "UPDATE handoffs SET started_at = now() - interval '9 days', updated_at = now() - interval '8 days'"
    )
    conn.commit()
    assert "Last session here" not in start_text(env, work)  # default: one week
    assert handoffs.last(conn, "work", str(work), None) is not None  # still stored
    shown = subprocess.run(
        [LORE, "handoff", "--workspace", str(work)], env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0 and "MARKER-OLD" in shown.stdout
    assert "older than 168 h: session starts no longer show it" in shown.stdout

    config = Path(env["LORE_CONFIG"])
    config.write_text("[session_start]\nhandoff_max_age_hours = 240\n" + config.read_text())
    assert "> MARKER-OLD" in start_text(env, work)
    config.write_text(config.read_text().replace("= 240", "= 0"))  # 0: never
    conn.execute("UPDATE handoffs SET updated_at = now()")
    conn.commit()
    assert "Last session here" not in start_text(env, work)


def test_lore_handoff_prints_it_in_full(setup: tuple[Path, dict[str, str]], conn: psycopg.Connection) -> None:
    work, env = setup
    empty = subprocess.run(
        [LORE, "handoff", "--workspace", str(work)], env=env, capture_output=True, text=True
    )
    assert empty.returncode == 0 and "No handoff for" in empty.stdout
    hook(env, "session-end", stop(work, "MARKER-FULL line one\nline two\nline three\nline four"))
    shown = subprocess.run([LORE, "handoff"], cwd=work, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert out.startswith("Last session in acme-api (space work): claude-code, just now")
    assert "  line four" in out and " M app.py" in out and "?? todo.txt" in out and "1 file changed" in out


def test_search_finds_it_forget_hides_it_purge_erases_it(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    hook(env, "session-end", stop(work, "Rewired the xylophone scheduler"))
    hits = search.keyword_candidates(conn, ["work"], "xylophone scheduler", model=None, kinds=["handoff"])
    assert [h.lineage for h in hits] == [1]
    assert search.keyword_candidates(conn, ["other"], "xylophone", model=None) == []

    from lore.store import notes

    notes.forget(conn, Origin("work", "cli", str(work)), ["work"], 1, "stale")
    conn.commit()
    assert "Last session here" not in start_text(env, work)
    hook(env, "session-end", stop(work, "another turn"))  # the row is updated, the note stays forgotten
    assert versions(conn) == [(1, False)] and "Last session here" not in start_text(env, work)

    purge.purge(conn, "n_1", "tester")
    assert conn.execute("SELECT count(*) FROM handoffs").fetchone() == (0,)


def test_the_psycopg_side_renders_the_same_text_as_the_hook(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    config = load_config(env)
    here = Origin("work", "claude-code", str(work))
    task = tasks.file(conn, config, here, "work", "Ship it", "soon")
    tasks.update(conn, here, ["work"], task.lineage, "doing")
    conn.commit()
    hook(env, "session-end", stop(work, "MARKER-SAME"))
    session = build(WorkspaceSignal(work, "test"), config, env, "claude-code")
    last = snapshot.read(conn, session_start.request(session, config, "claude-code")).last
    assert last is not None and last.doing == [(task.lineage, "Ship it")] and last.doing_total == 1
    ours = render.session_start([], space="work", last=last).text
    theirs = start_text(env, work)
    assert envelope.unnonced(ours).replace("just now", "?") == envelope.unnonced(theirs).replace(
        "just now", "?"
    )


def test_failures_print_nothing_and_a_handoff_that_cannot_be_written_waits_in_the_spool(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    assert hook(env, "session-end", {"cwd": str(work)}) == ""
    assert "names no session" in log_lines(env)[-1]["detail"] and not log_lines(env)[-1]["ok"]
    down = {**env, "LORE_DATABASE_URL": f"postgresql://postgres@/lore?host={work}/no-such-dir"}
    assert hook(down, "session-end", stop(work, "MARKER-SPOOLED", session="s-down")) == ""
    said = [e["detail"] for e in log_lines(env) if e["event"] == "session-end"][-1]
    assert said.startswith("spooled: the handoff") and "no-such-dir" in said
    assert (
        hook({**env, "LORE_URL": "http://127.0.0.1:9"}, "session-end", stop(work, "x", session="s-h")) == ""
    )
    said = [e["detail"] for e in log_lines(env) if e["event"] == "session-end"][-1]
    assert said.startswith("spooled: the handoff") and "Connection refused" in said
    assert conn.execute("SELECT count(*) FROM handoffs").fetchone() == (0,)
    # The database answers again: the next hook writes what waited for it (not the server's).
    assert hook(env, "session-end", stop(work, "MARKER-LATER", session="s-up")) == ""
    rows = conn.execute("SELECT session_id, message FROM handoffs ORDER BY session_id").fetchall()
    assert rows == [("s-down", "MARKER-SPOOLED"), ("s-up", "MARKER-LATER")]
    waiting = [json.loads(p.read_text()) for p in spool.pending(env)]
    assert sorted(w["kind"] for w in waiting if w["target"] == "http://127.0.0.1:9") == ["handoff", "record"]
    assert all(w["target"] != spool.LOCAL for w in waiting)  # the local ones are written


def test_a_successful_session_end_imports_nothing_heavy(
    setup: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    work, env = setup
    done, modules = hook_imports(env, json.dumps(stop(work, "imports check")), "session-end")
    assert done.returncode == 0 and done.stdout == ""
    assert conn.execute("SELECT message FROM handoffs").fetchone() == ("imports check",)
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
