"""The command line on a client: after `lore login URL`, every memory command answers from the server
(through /api, the same use cases as locally) and none touches this machine's database; the commands
that act on a database itself say plainly that they are local-only."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
from support.lorehttp import Server, push, token, two_space_config
from support.machines import Machine, machine


def _signed_in(tmp_path: Path, server: Server, conn: psycopg.Connection, project: Path) -> Machine:
    push(conn, "alice", two_space_config(project))
    laptop = machine(tmp_path, "laptop")
    laptop.login(server.url, token(conn, "alice"))
    return laptop


def test_memory_commands_answer_from_the_server(
    tmp_path: Path, signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    laptop = _signed_in(tmp_path, signed_in, conn, project)
    work = project / "work"
    said = laptop.ok("facts", "add", "acme-api deploys with make ship", "--subject", "acme-api", cwd=work)
    assert "Remembered f_" in said and "alice/work" in said
    fact = conn.execute("SELECT lineage, space, source FROM facts").fetchone()
    assert fact is not None and fact[1:] == ("alice/work", "cli")
    listed = laptop.ok("facts", "list", "--usage", cwd=work)
    assert "acme-api deploys with make ship" in listed and "Usage" in listed
    revised = laptop.ok("facts", "revise", f"f_{fact[0]}", "acme-api deploys with make release", cwd=work)
    assert revised.startswith(f"Revised f_{fact[0]}: acme-api deploys with make release")
    history = laptop.ok("facts", "history", f"f_{fact[0]}", cwd=work)
    assert "make ship" in history and "make release" in history
    note = laptop.ok("notes", "add", "The release runbook: tag, push, watch the canary", "--title", "runbook",
                     cwd=work)  # fmt: skip
    assert "Remembered n_" in note
    found = json.loads(laptop.ok("search", "release runbook canary", "--json", "--explain", cwd=work))
    assert found["results"] and found["results"][0]["title"] == "runbook" and "candidates" in found
    assert "runbook" in laptop.ok("search", "release runbook", "--explain", cwd=work)

    filed = laptop.ok("tasks", "file", "Rotate the keys", "before Friday", cwd=work)
    task_id = filed.split()[1]
    assert "in space alice/work" in filed
    assert "Rotate the keys" in laptop.ok("tasks", cwd=work)
    assert (
        laptop.ok("tasks", "update", task_id, "doing", "--note", "on it", cwd=work).strip().endswith("doing.")
    )
    assert "→ doing by alice/work (cli): on it" in laptop.ok("tasks", "show", task_id, cwd=work)
    sent = laptop.ok("messages", "send", "work", "CI is green again", cwd=project / "home")
    assert sent.startswith("Sent m_") and "to alice/work" in sent
    assert "CI is green again" in laptop.ok("messages", cwd=work)
    read = laptop.ok("messages", "read", cwd=work)
    assert "CI is green again" in read and "1 read" in read

    started = laptop.ok("session-start", cwd=work)
    assert "acme-api deploys with make release" in started and "<lore-memory" in started
    logged = laptop.ok("log", cwd=work)
    assert "session-start" in logged and "alice/work" in logged
    record = logged.split()[0].lstrip("#")
    assert "make release" in laptop.ok("log", "show", record)
    assert "Space alice/work" in laptop.ok("tidy", cwd=work)
    assert "No handoff for" in laptop.ok("handoff", cwd=work)
    exported = [json.loads(line) for line in laptop.ok("export").splitlines()]
    assert exported[0]["spaces"] == ["alice/work", "alice/home"] and exported[-1]["end"]
    assert {r["row"]["space"] for r in exported if r.get("table") == "facts"} == {"alice/work"}
    which = laptop.ok("which", str(work))
    assert which.startswith("alice/work") and f"lives on: the server {signed_in.url} (user alice)" in which
    assert laptop.untouched()


def test_commands_that_act_on_a_database_say_they_are_local_only(
    tmp_path: Path, signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    laptop = _signed_in(tmp_path, signed_in, conn, project)
    (tmp_path / "export.jsonl").write_text("")
    (tmp_path / "notes").mkdir()
    for args in (
        ("import", str(tmp_path / "export.jsonl")),
        ("purge", "f_1", "--yes"),
        ("reindex",),
        ("listen", "--no-desktop"),
        ("import-markdown", str(tmp_path / "notes")),
        ("import-instructions", str(project)),
    ):
        done = laptop.lore(*args, cwd=project / "work")
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert f"`lore {args[0]}` works on this machine's database" in done.stderr, done.stderr
        assert signed_in.url in done.stderr
    status = laptop.lore("db", "status")
    assert "holds none of the memory of the server this machine uses" in status.stderr
    assert laptop.untouched()


def test_the_servers_refusals_come_back_as_lores_errors(
    tmp_path: Path, signed_in: Server, conn: psycopg.Connection, project: Path
) -> None:
    laptop = _signed_in(tmp_path, signed_in, conn, project)
    missing = laptop.lore("facts", "history", "f_999", cwd=project / "work")
    assert missing.returncode == 1 and "lore: No fact f_999" in missing.stderr and "→" in missing.stderr
    refused = laptop.lore("tasks", "file", "x", "--to", "nowhere", cwd=project / "work")
    assert refused.returncode == 1 and "No space 'alice/nowhere'" in refused.stderr
    conn.execute("UPDATE tokens SET revoked_at = now()")
    conn.commit()
    gone = laptop.lore("facts", "list", cwd=project / "work")
    assert gone.returncode == 1 and "refused the token `lore login` stored (401)" in gone.stderr
    assert "lore login URL" in gone.stderr and "lore_" not in gone.stderr + gone.stdout
    assert laptop.untouched()
