"""Two machines, one memory: two client homes signed in to one real `lore serve --sign-in` process. A
fact written on machine A and the handoff its session-end hook left reach the next session start on
machine B, a message sent from A reaches B's next prompt; every hook is the real `lore` program, and
neither machine's local embedded database is made or started."""

from __future__ import annotations

from pathlib import Path

import psycopg
from support.lorehttp import Server, token, two_space_config
from support.machines import machine


def test_a_fact_a_handoff_and_a_message_from_machine_a_reach_machine_b(
    tmp_path: Path, signed_in_process: Server, conn: psycopg.Connection, project: Path
) -> None:
    secret = token(conn, "alice")
    laptop, desktop = machine(tmp_path, "machine-a"), machine(tmp_path, "machine-b")
    for computer in (laptop, desktop):
        computer.login(signed_in_process.url, secret)
    config = tmp_path / "config.toml"
    config.write_text(two_space_config(project))
    assert "Pushed" in laptop.ok("config", "push", str(config))
    work = project / "work"

    laptop.ok("facts", "add", "FACT-A: the API listens on port 8443", cwd=work)
    said = laptop.hook(
        "session-end",
        {
            "cwd": str(work),
            "session_id": "a-1",
            "hook_event_name": "Stop",
            "last_assistant_message": "HANDOFF-A: the TLS switch is half done; next, renew the cert.",
        },
    )
    assert said == ""
    started = desktop.hook("session-start", {"cwd": str(work), "source": "startup", "session_id": "b-1"})
    assert "FACT-A: the API listens on port 8443" in started
    assert "Last session here: claude-code" in started and "HANDOFF-A" in started
    assert "HANDOFF-A: the TLS switch is half done" in desktop.ok("handoff", cwd=work)

    laptop.ok("messages", "send", "work", "MESSAGE-A: staging is back", cwd=project / "home")
    prompted = desktop.hook("prompt", {"cwd": str(work), "session_id": "b-1", "prompt": "hi"})
    assert "MESSAGE-A: staging is back" in prompted
    assert desktop.hook("prompt", {"cwd": str(work), "session_id": "b-1", "prompt": "again"}) == ""

    records = desktop.ok("log", cwd=work)
    assert "session-start" in records and "prompt" in records
    assert laptop.untouched() and desktop.untouched()
    assert secret not in signed_in_process.logs()
