"""The pure rules and text of inboxes: who may write where, ids, limits, and the injected text."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from support import envelope
from support.rows import message, task

from lore.core import inbox
from lore.core.config import parse_config
from lore.core.errors import InvalidInput, NotFound, Refused

CONFIG = parse_config(
    """
[[space]]
id = "alpha"
accepts_from = ["beta"]
[[space]]
id = "beta"
""",
    Path("/home/u/.config/lore/config.toml"),
)


def test_own_space_and_accepts_from_are_allowed() -> None:
    inbox.check_target(CONFIG, "alpha", "alpha")
    inbox.check_target(CONFIG, "beta", "beta")
    inbox.check_target(CONFIG, "beta", "alpha")


def test_refusal_names_the_config_key_and_file() -> None:
    with pytest.raises(Refused) as err:
        inbox.check_target(CONFIG, "alpha", "beta")
    assert "does not accept" in err.value.message
    assert "accepts_from" in err.value.hint and "/home/u/.config/lore/config.toml" in err.value.hint
    assert '"alpha"' in err.value.hint and 'id = "beta"' in err.value.hint


def test_unknown_target_lists_known_spaces() -> None:
    with pytest.raises(NotFound) as err:
        inbox.check_target(CONFIG, "alpha", "nope")
    assert "alpha, beta" in err.value.hint


@pytest.mark.parametrize("value", ["m_12", " m_12 "])
def test_message_ids(value: str) -> None:
    assert inbox.parse_message_id(value) == 12


@pytest.mark.parametrize("value", ["12", "n_12", "m_", "m_x", None, 12])
def test_bad_message_ids(value: object) -> None:
    with pytest.raises(InvalidInput):
        inbox.parse_message_id(value)


def test_task_ids_and_statuses() -> None:
    assert inbox.parse_task_id("n_7") == 7
    with pytest.raises(InvalidInput):
        inbox.parse_task_id("f_7")
    assert inbox.parse_status(" Doing ") == "doing"
    with pytest.raises(InvalidInput) as err:
        inbox.parse_status("finished")
    assert "inbox, todo, doing, blocked, done" in err.value.message


@pytest.mark.parametrize("value", [-1, 61, "5", True])
def test_wait_is_bounded(value: object) -> None:
    with pytest.raises(InvalidInput):
        inbox.wait_seconds(value)
    assert inbox.wait_seconds(60) == 60.0 and inbox.wait_seconds(None) == 0.0


def test_status_line() -> None:
    assert inbox.status_line(0, 0) is None
    assert inbox.status_line(1, 0) == "Waiting here: 1 task in the inbox; call read_messages to see them."
    assert inbox.status_line(2, 3) == (
        "Waiting here: 2 tasks in the inbox and 3 unread messages; call read_messages to see them."
    )


WHEN = datetime(2026, 11, 29, 22, 4, tzinfo=UTC)


def test_message_and_task_lines() -> None:
    m = message(5, "beta", "claude-code", "is the\nAPI  stable?", 3, WHEN)
    assert (
        inbox.message_line(m)
        == "- m_5 from beta (claude-code), re m_3, 2026-11-29 22:04 UTC: is the\nAPI  stable?"
    )
    assert (
        inbox.message_line(m, max_body=10)
        == "- m_5 from beta (claude-code), re m_3, 2026-11-29 22:04 UTC: is the AP…"
    )
    t = task(9, "inbox", "Fix CI", "the build is red", "alpha", "beta")
    assert inbox.task_line(t) == "- n_9 [inbox] from beta: Fix CI — the build is red"
    home = task(10, "todo", None, "write docs", "alpha", "alpha")
    assert inbox.task_line(home) == "- n_10 [todo]: write docs"


def test_task_list_puts_the_cut_line_first_inside_the_budget() -> None:
    many = [task(i, "todo", f"task {i}", "x" * 100, "alpha", "alpha") for i in range(100)]
    listed = inbox.task_list(many, space="alpha", max_chars=1_000)
    assert len(listed.text) <= 1_000
    lines = listed.text.splitlines()
    assert lines[1] == f"Showing {listed.shown} of 100 open tasks; `lore tasks` lists them all."
    assert listed.shown + listed.omitted == 100 and listed.shown == len(lines) - 2
    assert inbox.task_list([], space="alpha").text == "No open tasks in space alpha."


def test_prompt_text_is_empty_without_news_and_brief_with() -> None:
    assert inbox.prompt_text("alpha", [], []) == ""
    long = message(1, "beta", "codex", "word " * 500, None, WHEN)
    text = inbox.prompt_text("alpha", [long], [], more_messages=3)
    found = envelope.find(text, envelope.INBOX)
    assert envelope.opens(text, "alpha", kind=envelope.INBOX) and text.endswith(found.closing)
    assert "not from the user" in text and "…and 3 more unread messages." in text
    assert len(text) < 1_000
    assert "send_message" in text and "update_task" not in text
