"""lore.core.when: the period a question names, and what a note's `when` accepts."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lore.core.errors import InvalidInput
from lore.core.when import Period, happened, period

NOW = datetime(2026, 12, 5, 15, 0, tzinfo=UTC)  # a Saturday


def span(question: str) -> tuple[str, str] | int | None:
    found = period(question, NOW)
    if found is None:
        return None
    if found.month is not None:
        return found.month
    assert found.start is not None and found.end is not None
    return found.start.date().isoformat(), found.end.date().isoformat()


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did Caroline do in May 2023?", ("2023-05-01", "2023-06-01")),
        ("what happened on 8 May, 2023?", ("2023-05-08", "2023-05-09")),
        ("the deploy of June 9, 2023", ("2023-06-09", "2023-06-10")),
        ("the 2023-05-08 incident", ("2023-05-08", "2023-05-09")),
        ("the 2024-02 release", ("2024-02-01", "2024-03-01")),
        ("deploys in 2023", ("2023-01-01", "2024-01-01")),
        ("December 2025 outage", ("2025-12-01", "2026-01-01")),
        ("what did we decide last week", ("2026-11-23", "2026-11-30")),
        ("notes from this week", ("2026-11-30", "2026-12-07")),
        ("yesterday's failing test", ("2026-12-04", "2026-12-05")),
        ("what broke today", ("2026-12-05", "2026-12-06")),
        ("last month", ("2026-11-01", "2026-12-01")),
        ("this year", ("2026-01-01", "2027-01-01")),
        ("last year", ("2025-01-01", "2026-01-01")),
        ("what did we ship in July", 7),
        ("what happened in March", 3),
        ("plans for Sept.", None),  # an abbreviation alone is too often another word
        ("May I deploy on Friday?", None),  # "may" alone is a verb
        ("the march to production", None),
        ("how do deploys work", None),
        ("the 2023-13-01 typo", ("2023-01-01", "2024-01-01")),  # no month 13: the year is still named
    ],
)
def test_the_period_a_question_names(question: str, expected: object) -> None:
    assert span(question) == expected


def test_a_period_holds_its_span_and_a_month_any_year() -> None:
    may = period("in May 2023", NOW)
    assert may is not None and may.holds(datetime(2023, 5, 31, 23, tzinfo=UTC))
    assert not may.holds(datetime(2023, 6, 1, tzinfo=UTC))
    assert Period(month=5).holds(datetime(2019, 5, 2, tzinfo=UTC))
    assert not Period(month=5).holds(datetime(2019, 6, 2, tzinfo=UTC))


def test_when_is_iso_8601_and_says_how_to_write_it() -> None:
    assert happened("2023-05-08") == datetime(2023, 5, 8, tzinfo=UTC)
    assert happened("2023-05-08T13:56:00") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert happened(None) is None
    with pytest.raises(InvalidInput) as err:
        happened("8 May 2023")
    assert "when is not an ISO 8601 date" in err.value.message and "2026-03-01" in err.value.hint
