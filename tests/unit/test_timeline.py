"""Both time axes as pure predicates (the SQL in facts.py is checked against these in integration)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support.rows import fact

from lore.core.errors import InvalidInput
from lore.core.rows import Fact
from lore.core.timeline import When, believed_at, parse_time, valid_at, visible


def d(day: int) -> datetime:
    return datetime(2026, 1, day, tzinfo=UTC)


def version(
    recorded_at: datetime, superseded_at: datetime | None, valid_from: datetime, valid_to: datetime | None
) -> Fact:
    return fact(
        1, "x", recorded_at=recorded_at, superseded_at=superseded_at, valid_from=valid_from, valid_to=valid_to
    )


def test_belief_interval_is_half_open() -> None:
    row = version(d(2), d(5), d(1), None)
    assert not believed_at(row, d(1))
    assert believed_at(row, d(2))
    assert believed_at(row, d(4))
    assert not believed_at(row, d(5))
    assert not believed_at(row, None)  # superseded: not a current belief
    assert believed_at(version(d(2), None, d(1), None), None)


def test_valid_interval_is_half_open() -> None:
    row = version(d(1), None, d(10), d(20))
    assert (
        not valid_at(row, d(9)) and valid_at(row, d(10)) and valid_at(row, d(19)) and not valid_at(row, d(20))
    )


def test_visible_combines_axes() -> None:
    row = version(d(2), d(5), d(10), None)
    assert visible(row, When(as_of=d(3), valid_at=d(11)), now=d(30))
    assert not visible(row, When(as_of=d(3), valid_at=d(9)), now=d(30))
    assert not visible(row, When(), now=d(30))


@pytest.mark.parametrize("text", ["2026-03-01", "2026-03-01T14:30:00Z", "2026-03-01T14:30:00+02:00"])
def test_parse_time_accepts_iso(text: str) -> None:
    parsed = parse_time(text, "as_of")
    assert parsed is not None and parsed.tzinfo is not None


@pytest.mark.parametrize("text", ["yesterday", "2026-13-01", "01/03/2026", "0001-01-01"])
def test_parse_time_rejects_with_example(text: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_time(text, "valid_at")
    assert "valid_at" in err.value.message and "2026-03-01" in err.value.hint
