"""Every write path refuses a likely credential with an error that says why and how, writes nothing,
and stores it only when a person passes `--allow-secret` to the CLI. No tool argument can."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from support.mcpclient import call, lore_session, ok, text

from reliability.conftest import Project
from reliability.fakes import evasions, fake_credentials

pytestmark = pytest.mark.anyio
FAKES = fake_credentials(3)


def _rows(conn: psycopg.Connection) -> tuple[int, ...]:
    row = conn.execute(
        "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM notes), (SELECT count(*) FROM tasks), "
        "(SELECT count(*) FROM messages), (SELECT count(*) FROM forget_log), "
        "(SELECT count(*) FROM irrelevant)"
    ).fetchone()
    assert row is not None
    return tuple(row)


async def test_every_tool_that_writes_refuses_a_credential(
    project: Project, conn: psycopg.Connection
) -> None:
    async with lore_session(project.env, cwd=project.dir) as s:
        fact = (await ok(s, "remember_fact", statement="deploys with make ship")).structured_content
        note = (await ok(s, "remember_note", body="deploy guide")).structured_content
        task = (await ok(s, "file_task", title="rotate keys", body="soon")).structured_content
        assert fact and note and task
        before = _rows(conn)
        attempts: dict[str, dict[str, Any]] = {
            "remember_fact": {"statement": f"prod key: {FAKES['aws access key id']}"},
            "remember_fact (subject)": {"statement": "ok", "subject": FAKES["npm token"]},
            "remember_note": {"body": f"setup:\n{FAKES['rsa private key']}"},
            "remember_note (title)": {"body": "ok", "title": FAKES["github classic"]},
            "remember_note (tags)": {"body": "ok", "tags": ["x", FAKES["hugging face"]]},
            "revise_fact": {"id": fact["id"], "statement": FAKES["postgres url"]},
            "forget": {"id": fact["id"], "reason": f"leaked {FAKES['stripe live']}"},
            "file_task": {"title": "creds", "body": FAKES["gcp service account"]},
            "file_task (other space)": {"title": "creds", "body": FAKES["slack bot"], "to": "q"},
            "update_task": {"id": task["id"], "status": "doing", "note": FAKES["anthropic"]},
            "send_message": {"to": "q", "body": f"use {FAKES['openai project']}"},
            "mark_irrelevant": {"note_id": note["id"], "query": FAKES["jwt"]},
        }
        for label, args in attempts.items():
            tool = label.split(" ")[0]
            result = await call(s, tool, **args)
            said = text(result)
            assert result.is_error, label
            assert "looks like it holds a credential" in said, (label, said)
            assert "Traceback" not in said
            # The credential is never echoed back: at most its first characters (what it looks like).
            given = [
                v for v in args.values() for v in (v if isinstance(v, list) else [v]) if isinstance(v, str)
            ]
            used = [fake for fake in FAKES.values() if any(fake in value for value in given)]
            assert used, label  # every attempt carries one of the fakes
            for fake in used:  # no run of 12 characters from past its first 8 appears in the error
                leaked = [fake[i : i + 12] for i in range(8, len(fake) - 11) if fake[i : i + 12] in said]
                assert leaked == [], (label, said)
        # how to do it deliberately: a CLI flag, named in the error of each kind of item
        assert 'lore facts add "…" --allow-secret' in text(
            await call(s, "remember_fact", **attempts["remember_fact"])
        )
        assert "lore notes add" in text(await call(s, "remember_note", **attempts["remember_note"]))
        assert "lore tasks file" in text(await call(s, "file_task", **attempts["file_task"]))
        assert "lore messages send" in text(await call(s, "send_message", **attempts["send_message"]))
        # and never a tool argument
        sneaky = await call(s, "remember_fact", statement=FAKES["aws secret"], allow_secret=True)
        assert sneaky.is_error and "Unknown argument" in text(sneaky)
        assert _rows(conn) == before  # nothing half-written
        assert "deploys with make ship" in text(await ok(s, "recall_facts"))  # still serving


def test_the_cli_refuses_unless_allow_secret(project: Project, conn: psycopg.Connection) -> None:
    key = FAKES["github fine-grained"]
    refused = project.lore("facts", "add", f"CI token {key}")
    assert refused.returncode == 1 and "looks like it holds a credential" in refused.stderr
    assert key not in refused.stderr and "Traceback" not in refused.stderr
    assert conn.execute("SELECT count(*) FROM facts").fetchone() == (0,)
    stored = project.lore("facts", "add", "--allow-secret", f"CI token {key}")
    assert stored.returncode == 0, stored.stderr
    assert conn.execute("SELECT statement FROM facts").fetchone() == (f"CI token {key}",)
    for args in (
        ("notes", "add", FAKES["azure storage"], "--kind", "devenv"),
        ("tasks", "file", "keys", FAKES["sql server"]),
        ("messages", "send", "q", FAKES["redis url"]),
        ("facts", "revise", "f_1", FAKES["libpq"]),
    ):
        no = project.lore(*args)
        assert no.returncode == 1 and "--allow-secret" in no.stderr, (args, no.stderr)
        yes = project.lore(*args, "--allow-secret")
        assert yes.returncode == 0, (args, yes.stderr)
    counts = _rows(conn)
    assert counts[:4] == (2, 2, 1, 1)  # fact + its revision, note + task note, the task, the message


async def test_evasions_are_refused_on_the_tools_too(project: Project, conn: psycopg.Connection) -> None:
    """The evasions of tests/reliability/test_secrets.py through real tools: the domain functions scan
    what they are given with the same `secrets.refuse`, fields together (a note's title and body)."""
    tricks = evasions(5)

    def one(name: str) -> str:
        value = tricks[name][0][1]
        assert isinstance(value, str)
        return value

    title, body = (str(v) for _, v in tricks["GitHub token, split across title and body"])
    async with lore_session(project.env, cwd=project.dir) as s:
        before = _rows(conn)
        attempts: dict[str, dict[str, Any]] = {
            "remember_fact": {"statement": one("GitHub token, a zero-width space inside")},
            "remember_note": {"body": body, "title": title},
            "file_task": {"title": "rotate", "body": one("base64 of a GitHub token")},
            "send_message": {"to": "q", "body": one("password=, unquoted")},
            "remember_fact (full-width)": {"statement": one("GitHub token, a full-width prefix")},
        }
        for label, args in attempts.items():
            result = await call(s, label.split(" ")[0], **args)
            assert result.is_error and "looks like it holds a credential" in text(result), (
                label,
                text(result),
            )
        assert _rows(conn) == before
