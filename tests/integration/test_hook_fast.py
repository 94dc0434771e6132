"""The session-start hook's fast path (lore.hooks.quick): the text kept for a workspace is shown again,
and recorded, only while nothing it was made from has changed: the memory (any write to the spaces
read), the config, the files its facts name, the time (a fact's valid_to), the environment, a
transaction in progress when it was made. Each case below would show a stale text if that check were
missing; each is run as agents run it: the real `lore hook session-start` as a process."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from support import cli

from lore.core import hooklog, lastgood, spool
from lore.core.session import Origin
from lore.store import facts

LORE = str(Path(sys.executable).parent / "lore")


@pytest.fixture
def work(tmp_path: Path, lore_env: dict[str, str]) -> tuple[Path, dict[str, str]]:
    where = tmp_path / "acme-api"
    (where / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(where)], check=True)
    Path(lore_env["LORE_CONFIG"]).write_text(f'[[space]]\nid = "work"\npaths = ["{where}"]\n')
    return where, lore_env


def start(env: dict[str, str], cwd: Path, session: str = "s") -> tuple[str, str]:
    """(what the agent reads, how the hook log says it was made: `kept` or `composed`)."""
    done = subprocess.run(
        [LORE, "hook", "session-start", "--client", "claude-code"],
        input=json.dumps({"cwd": str(cwd), "source": "startup", "session_id": session}),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    text: str = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    detail = hooklog.entries(env)[-1].detail
    return text, "kept" if "kept text, unchanged" in detail else "composed"


def remember(conn: psycopg.Connection, where: Path, statement: str, **kwargs: object) -> None:
    facts.remember(conn, Origin("work", "cli", str(where)), statement, **kwargs)  # type: ignore[arg-type]
    conn.commit()


def test_unchanged_memory_is_shown_again_and_recorded_each_time(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    remember(conn, where, "deploys with make ship")
    first, how = start(env, where, "s1")
    assert how == "composed" and "make ship" in first
    again, how = start(env, where, "s2")
    assert (again, how) == (first, "kept")
    records = json.loads(cli.run("log", "--json", env=env, cwd=where).stdout)
    assert [(r["session_id"], r["text"], r["outcome"]) for r in records] == [
        ("s2", first, "shown"),
        ("s1", first, "shown"),
    ]
    kept = next(lastgood.folder(env).iterdir())
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600


def test_any_write_to_a_space_read_composes_anew(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    remember(conn, where, "deploys with make ship")
    start(env, where)
    remember(conn, where, "CI runs on buildkite")
    text, how = start(env, where)
    assert how == "composed" and "buildkite" in text
    conn.execute("UPDATE facts SET superseded_at = now() WHERE statement LIKE 'CI runs%'")  # forgotten
    conn.commit()
    text, how = start(env, where)
    assert how == "composed" and "buildkite" not in text
    conn.execute(
        "INSERT INTO messages (thread, to_space, from_space, body, source) VALUES (1, 'work', 'x', 'hi', 't')"
    )
    conn.commit()
    text, how = start(env, where)
    assert how == "composed" and "1 unread message" in text


def test_the_config_a_named_path_and_the_environment_are_looked_at_again(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection, tmp_path: Path
) -> None:
    where, env = work
    (where / "src" / "deploy.sh").write_text("#!/bin/sh\n")
    remember(conn, where, "src/deploy.sh ships the app")
    text, _ = start(env, where)
    assert "src/deploy.sh ships" in text and start(env, where)[1] == "kept"
    (where / "src" / "deploy.sh").unlink()  # the fact now names a file that is gone
    text, how = start(env, where)
    assert how == "composed" and "src/deploy.sh ships" not in text and "naming files that are gone" in text
    assert start(env, where)[1] == "kept"
    Path(env["LORE_CONFIG"]).write_text(
        f'[[space]]\nid = "work"\npaths = ["{where}"]\n[session_start]\nmax_chars = 600\n'
    )
    assert start(env, where)[1] == "composed"  # the config changed
    other = tmp_path / "other.toml"
    other.write_text(Path(env["LORE_CONFIG"]).read_text())
    assert start({**env, "LORE_CONFIG": str(other)}, where)[1] == "composed"  # another config


def test_a_fact_whose_valid_time_ends_is_not_shown_from_a_kept_text(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    remember(conn, where, "the staging freeze is on", valid_to=datetime.now(UTC) + timedelta(seconds=3))
    text, _ = start(env, where)
    assert "staging freeze" in text and start(env, where)[1] == "kept"
    time.sleep(3.2)
    text, how = start(env, where)
    assert how == "composed" and "staging freeze" not in text


def test_a_transaction_in_progress_when_it_was_read_keeps_nothing(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection, db_url: str
) -> None:
    """A write that began before the read and commits after it may carry a lower number than one the
    read saw: a text read then could look unchanged while it is not. So nothing is kept from it."""
    where, env = work
    remember(conn, where, "deploys with make ship")
    with psycopg.connect(db_url) as writer:
        writer.execute(
            "INSERT INTO facts (lineage, space, statement, source) "
            "VALUES (nextval('fact_lineage_seq'), 'work', 'WRITTEN MEANWHILE', 't')"
        )  # not committed yet: its change row is numbered now
        text, how = start(env, where)
        assert how == "composed" and "WRITTEN MEANWHILE" not in text
        assert start(env, where)[1] == "composed"  # nothing was kept
        writer.commit()
    text, how = start(env, where)
    assert how == "composed" and "WRITTEN MEANWHILE" in text
    assert start(env, where)[1] == "kept"


def test_a_database_password_is_never_kept(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection, db_url: str
) -> None:
    """With an external database named by a URL holding a password, nothing that needs the URL is
    kept on disk (the text is, for when the database cannot answer)."""
    where, env = work
    remember(conn, where, "deploys with make ship")
    with_password = db_url.replace("postgresql://postgres@", "postgresql://postgres:s3cret-pw@")
    outside = {**env, "LORE_DATABASE_URL": with_password}
    assert start(outside, where)[1] == "composed"
    assert start(outside, where)[1] == "composed"
    for kept in lastgood.folder(env).iterdir():
        assert "s3cret-pw" not in kept.read_text()


def test_writes_waiting_in_the_spool_take_the_full_path(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    remember(conn, where, "deploys with make ship")
    start(env, where)
    spool.add(
        env,
        "record",
        spool.LOCAL,
        "k",
        {
            "kind": "session-start",
            "via": "hook",
            "client": "x",
            "workspace": "/w",
            "outcome": "config",
            "event_key": "k",
        },
    )
    assert start(env, where)[1] == "composed"  # and it wrote what waited
    assert spool.pending(env) == [] and start(env, where)[1] == "kept"


FAST_PROBE = """
import io, json, sys
sys.stdin = io.StringIO(sys.argv[1])
from lore.cli.main import main
code = main(["hook", "session-start", "--client", "claude-code"])
sys.stderr.write("\\nMODULES=" + json.dumps(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""
# What the fast path never imports: the type machinery (typing, dataclasses and what they pull in),
# the config parser, the command line's parser, and every module that composes.
NOT_ON_THE_FAST_PATH = (
    "typing",
    "dataclasses",
    "inspect",
    "ast",
    "tomllib",
    "argparse",
    "lore.core.render",
    "lore.core.rows",
    "lore.core.session_start",
    "lore.core.config",
    "lore.core.secrets",
    "lore.service",
    "lore.db.embedded",
    "lore.hooks.session_start",
    "lore.hooks.guard",
)


def test_the_fast_path_holds_its_import_budget(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    where, env = work
    remember(conn, where, "deploys with make ship")
    start(env, where)
    stdin = json.dumps({"cwd": str(where), "source": "startup", "session_id": "s"})
    done = subprocess.run(
        [sys.executable, "-c", FAST_PROBE, stdin], env=env, capture_output=True, text=True, timeout=60
    )
    modules = set(json.loads(done.stderr.split("MODULES=", 1)[1]))
    assert done.returncode == 0 and "make ship" in done.stdout
    assert "kept text, unchanged" in hooklog.entries(env)[-1].detail
    assert modules.isdisjoint(NOT_ON_THE_FAST_PATH), sorted(modules & set(NOT_ON_THE_FAST_PATH))
    ours = sorted(m for m in modules if m.startswith("lore"))
    assert len(ours) <= 16, ours


def test_a_login_made_later_sends_the_hook_to_the_server(
    work: tuple[Path, dict[str, str]], conn: psycopg.Connection
) -> None:
    """Signed in after the text was kept (`lore login` stores the server): the next session start is
    the server's, never this machine's kept text."""
    from lore.core import login

    where, env = work
    remember(conn, where, "deploys with make ship")
    start(env, where)
    assert start(env, where)[1] == "kept"
    login.write(env, login.Login(url="http://127.0.0.1:9", user="alice", token="lore_" + "x" * 43))
    text, how = start(env, where)
    assert how == "composed" and "make ship" not in text and "lore server did not answer" in text
