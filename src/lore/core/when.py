"""When things happened: the time a note's event took place, and the period a question names.

A note may carry the time of its event (`remember_note(..., when=...)`; without one, the time it was
written). A search whose question names a date or a period ("in May", "May 2023", "2023", "on
2023-05-08", "last week", "yesterday") favours notes from then (lore.core.ranking.favour). Pure: the
caller gives the clock. (docs/design.md, Retrieval.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from lore.core.timeline import parse_time

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_SHORT = {name[:3]: i + 1 for i, name in enumerate(MONTHS)} | {"sept": 9}
_MONTH = r"(january|february|march|april|may|june|july|august|september|october|november|december|" + (
    r"jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_YEAR = r"((?:19|20)\d\d)"
# "may" and "march" are also a verb: alone, they name a month only after a word that asks for one
_LEAD = r"(?:in|on|of|during|since|until|by|before|after|early|late|mid|last|this|next|from|to|through)"


@dataclass(frozen=True)
class Period:
    """A span of time [start, end), or a month of any year (`month`, start and end None)."""

    start: datetime | None = None
    end: datetime | None = None
    month: int | None = None
    said: str = ""  # the words of the question that named it

    def holds(self, moment: datetime) -> bool:
        if self.month is not None:
            return moment.month == self.month
        assert self.start is not None and self.end is not None
        return self.start <= moment < self.end


def happened(value: object, field: str = "when") -> datetime | None:
    """A note's `when` as given: ISO 8601 date or date-time (naive: UTC), or None."""
    return parse_time(value, field)


def _day(year: int, month: int, day: int) -> Period | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return Period(start, start + timedelta(days=1))


def _month(year: int, month: int) -> Period:
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return Period(start, end)


def _month_number(word: str) -> int:
    word = word.lower().rstrip(".")
    return MONTHS.index(word) + 1 if word in MONTHS else _SHORT[word[:4] if word == "sept" else word[:3]]


def _relative(text: str, now: datetime) -> Period | None:
    today = datetime(now.year, now.month, now.day, tzinfo=UTC)
    found = re.search(r"\b(yesterday|today|(last|this) (week|month|year))\b", text)
    if found is None:
        return None
    said = found.group(0)
    if said in ("today", "yesterday"):
        start = today - timedelta(days=said == "yesterday")
        return Period(start, start + timedelta(days=1), said=said)
    which, unit = found.group(2), found.group(3)
    if unit == "week":
        monday = today - timedelta(days=today.weekday())
        start = monday - timedelta(weeks=which == "last")
        return Period(start, start + timedelta(weeks=1), said=said)
    if unit == "month":
        year, month = (now.year, now.month) if which == "this" else _previous_month(now)
        return _with(_month(year, month), said)
    year = now.year - (which == "last")
    return Period(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC), said=said)


def _previous_month(now: datetime) -> tuple[int, int]:
    return (now.year - 1, 12) if now.month == 1 else (now.year, now.month - 1)


def _with(period: Period, said: str) -> Period:
    return Period(period.start, period.end, period.month, said)


def period(question: str, now: datetime) -> Period | None:
    """The date or period `question` names, if any: the first of an ISO date or month, a day and
    month with a year, a month with a year, a relative period (last week), a year, a month alone."""
    text = question.lower()
    for find in (_iso, _day_month_year, _month_year):
        found = find(text)
        if found is not None:
            return found
    relative = _relative(text, now)
    if relative is not None:
        return relative
    year = re.search(r"\b" + _YEAR + r"\b", text)
    if year:
        y = int(year.group(1))
        return Period(datetime(y, 1, 1, tzinfo=UTC), datetime(y + 1, 1, 1, tzinfo=UTC), said=year.group(0))
    return _month_alone(text)


def _iso(text: str) -> Period | None:
    found = re.search(r"\b" + _YEAR + r"-(\d\d)(?:-(\d\d))?\b", text)
    if found is None or not 1 <= int(found.group(2)) <= 12:
        return None
    year, month = int(found.group(1)), int(found.group(2))
    day = _day(year, month, int(found.group(3))) if found.group(3) else _month(year, month)
    return _with(day, found.group(0)) if day is not None else None


def _day_month_year(text: str) -> Period | None:
    day_first = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)? (?:of )?" + _MONTH + r",? " + _YEAR + r"\b", text)
    if day_first:
        day, month, year = day_first.group(1), day_first.group(2), day_first.group(3)
        said = day_first.group(0)
    else:
        month_first = re.search(r"\b" + _MONTH + r" (\d{1,2})(?:st|nd|rd|th)?,? " + _YEAR + r"\b", text)
        if month_first is None:
            return None
        month, day, year = month_first.group(1), month_first.group(2), month_first.group(3)
        said = month_first.group(0)
    found = _day(int(year), _month_number(month), int(day))
    return _with(found, said) if found is not None else None


def _month_year(text: str) -> Period | None:
    found = re.search(r"\b" + _MONTH + r",? (?:of )?" + _YEAR + r"\b", text)
    if found is None:
        return None
    return _with(_month(int(found.group(2)), _month_number(found.group(1))), found.group(0))


def _month_alone(text: str) -> Period | None:
    for found in re.finditer(r"\b(?:(" + _LEAD + r") )?" + _MONTH + r"(?![\w'])", text):
        word = found.group(2).rstrip(".")
        if len(word) <= 4 and word not in ("june", "july"):
            continue  # an abbreviation alone is too often another word ("mar", "jan", "dec")
        if word in ("may", "march") and not found.group(1):
            continue
        return Period(month=_month_number(word), said=found.group(0))
    return None


def day_of(moment: datetime | date) -> str:
    """How a note's time is shown: its date (YYYY-MM-DD)."""
    return moment.strftime("%Y-%m-%d")
