"""The hooks' fail-open guard (lore.hooks.guard): whatever happens, a hook prints nothing and exits 0,
and says why in the hook log. In particular when the soft deadline goes off while a failure is
being logged: before, the alarm then escaped the handler (exit 1, "lore: soft deadline of 0.9s
passed" on stderr; seen under load in tests/integration/test_hook_redirect.py)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from lore.core import hooklog, spool
from lore.hooks import guard


def test_a_deadline_that_goes_off_while_a_failure_is_logged_stays_inside(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    logged: list[str] = []

    def slow_append(client: str, event: str, ok: bool, detail: str, env: Mapping[str, str]) -> None:
        time.sleep(0.3)  # past the deadline, which was 0.05 s away when body() started
        logged.append(detail)

    monkeypatch.setattr(hooklog, "append", slow_append)

    def body(run: guard.Run) -> str:
        raise ValueError("the server answered 302")

    started = time.monotonic() - guard.DEFAULT_DEADLINE  # no time left: the alarm is set to 0.05 s
    env = {"LORE_DATA_DIR": str(tmp_path)}
    assert guard.run("claude-code", "session-start", env, started, body) == ""
    assert len(logged) == 1 and logged[0].startswith("failed: unexpected ValueError: the server answered 302")
    assert len(spool.pending(env)) == 1  # its record, for the next lore process that can write


def test_a_body_past_the_deadline_is_cut_logged_and_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    logged: list[str] = []
    monkeypatch.setattr(hooklog, "append", lambda client, event, ok, detail, env: logged.append(detail))

    def body(run: guard.Run) -> str:
        time.sleep(2)
        return "never"

    started = time.monotonic() - guard.DEFAULT_DEADLINE + 0.1
    env = {"LORE_DATA_DIR": str(tmp_path)}
    said = guard.run(
        "gemini", "session-start", env, started, body, lambda run, outcome: f"told {outcome.kind}"
    )
    assert said == "told deadline"
    assert len(logged) == 1 and logged[0].startswith(
        "deadline: lore did not finish within its 0.9 s deadline"
    )


def test_the_deadline_moves_only_within_its_bounds() -> None:
    assert guard.deadline({}) == guard.DEFAULT_DEADLINE == 0.9
    assert guard.deadline({"LORE_HOOK_DEADLINE": "2.5"}) == 2.5
    assert guard.deadline({"LORE_HOOK_DEADLINE": "60"}) == guard.DEADLINE_RANGE[1] < 5  # Claude Code's kill
    assert guard.deadline({"LORE_HOOK_DEADLINE": "0"}) == guard.DEADLINE_RANGE[0]
    for raw, expected in {"soon": 0.9, "nan": 0.9, " ": 0.9, "-inf": guard.DEADLINE_RANGE[0]}.items():
        assert guard.deadline({"LORE_HOOK_DEADLINE": raw}) == expected, raw
