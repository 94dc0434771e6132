"""The JSON answers both sides of the wire build from one place (lore.service.wire): a write's answer
carries the ids of what the check named, whether it ran in this process (`lore facts add` on this
machine) or on a server (`POST /api/facts`, `/api/notes`), and says whether it was a copy."""

from __future__ import annotations

from support import rows

from lore.core import advice, naming
from lore.service import wire
from lore.service.memory import Remembered
from lore.service.work import Inbox, Sent


def test_a_write_answers_what_the_check_named_and_whether_it_was_a_copy() -> None:
    old, new = (
        rows.fact(1, "Deploys go to fly.io", space="w"),
        rows.fact(2, "Deploys go to Render, not fly.io anymore", space="w"),
    )
    plain = wire.remembered(Remembered(new), "fact", advice.CLI)
    assert plain["fact"]["id"] == "f_2" and plain["duplicate"] is False
    assert {k: plain[k] for k in ("id", "space")} == {"id": "f_2", "space": "w"}
    assert "similar" not in plain and "conflicts" not in plain
    named = wire.remembered(Remembered(new, found=naming.Verdict(conflicts=(old,))), "fact", advice.CLI)
    assert named["conflicts"] == ["f_1"] and "lore facts add" in named["message"]
    copy = wire.remembered(Remembered(old, duplicate=True), "fact", advice.TOOL)
    assert copy["duplicate"] is True and copy["id"] == "f_1" and "nothing written" in copy["message"]
    shown = wire.remembered(Remembered(rows.note(3, "A runbook")), "note", advice.CLI)
    assert shown["note"]["id"] == "n_3" and shown["duplicate"] is False and shown["id"] == "n_3"


def test_the_inbox_and_a_sent_message_have_one_shape() -> None:
    message = rows.message(4, "a", "cli", "hi", None, rows.T0, to="w")
    got = wire.inbox("w", Inbox([message], unread_left=2, tasks=[], open_tasks=0))
    assert got == {
        "space": "w",
        "messages": [wire.row(message)],
        "unread_left": 2,
        "tasks": [],
        "open_tasks": 0,
    }
    assert wire.sent(Sent(message, 0.0, None)) == {"message": wire.row(message), "waited": 0.0, "reply": None}
    assert wire.sent(Sent(message, 1.5, message))["reply"] == wire.row(message)
