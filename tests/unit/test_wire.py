"""The JSON answers both sides of the wire build from one place (lore.service.wire): a write's answer
carries the ids of what the check named, whether it ran in this process (`lore facts add` on this
machine) or on a server (`POST /api/facts`, `/api/notes`), and says whether it was a copy."""

from __future__ import annotations

from datetime import UTC, datetime

from lore.core import advice, naming
from lore.core.rows import Fact, Message, Note
from lore.service import wire
from lore.service.memory import Remembered
from lore.service.work import Inbox, Sent

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def fact(lineage: int, statement: str) -> Fact:
    return Fact(
        lineage=lineage,
        version_id=lineage * 10,
        space="w",
        statement=statement,
        subject="proj",
        valid_from=T0,
        valid_to=None,
        recorded_at=T0,
        superseded_at=None,
        source="t",
        workspace=None,
    )


def note(lineage: int, body: str) -> Note:
    return Note(
        lineage=lineage,
        version_id=lineage * 10,
        space="w",
        kind="note",
        title=None,
        body=body,
        tags=[],
        recorded_at=T0,
        superseded_at=None,
        source="t",
        workspace=None,
    )


def test_a_write_answers_what_the_check_named_and_whether_it_was_a_copy() -> None:
    old, new = fact(1, "Deploys go to fly.io"), fact(2, "Deploys go to Render, not fly.io anymore")
    plain = wire.remembered(Remembered(new), "fact", advice.CLI)
    assert plain["fact"]["id"] == "f_2" and plain["duplicate"] is False
    assert {k: plain[k] for k in ("id", "space")} == {"id": "f_2", "space": "w"}
    assert "similar" not in plain and "conflicts" not in plain
    named = wire.remembered(Remembered(new, found=naming.Verdict(conflicts=(old,))), "fact", advice.CLI)
    assert named["conflicts"] == ["f_1"] and "lore facts add" in named["message"]
    copy = wire.remembered(Remembered(old, duplicate=True), "fact", advice.TOOL)
    assert copy["duplicate"] is True and copy["id"] == "f_1" and "nothing written" in copy["message"]
    shown = wire.remembered(Remembered(note(3, "A runbook")), "note", advice.CLI)
    assert shown["note"]["id"] == "n_3" and shown["duplicate"] is False and shown["id"] == "n_3"


def test_the_inbox_and_a_sent_message_have_one_shape() -> None:
    message = Message(
        num=4, to_space="w", from_space="a", body="hi", reply_to=None, thread=4, source="cli",
        workspace=None, from_session=None, sent_at=T0, read_at=None, read_by=None,
    )  # fmt: skip
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
