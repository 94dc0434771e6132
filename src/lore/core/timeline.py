"""The two time axes, as pure functions: what lore believed at T (belief time) and what was true
at T (valid time). The SQL in facts.py/notes.py applies the same predicates; tests check both agree.

- belief: recorded_at <= T < superseded_at (superseded_at NULL = still believed)
- valid:  valid_from  <= T < valid_to      (valid_to NULL = still true)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from lore.core.errors import InvalidInput
from lore.core.rows import Fact


@dataclass(frozen=True)
class When:
    """A query's point of view. `as_of` None = current belief; `valid_at` None = now."""

    as_of: datetime | None = None
    valid_at: datetime | None = None


def believed_at(row: Fact, t: datetime | None) -> bool:
    if t is None:
        return row.superseded_at is None
    return row.recorded_at <= t and (row.superseded_at is None or t < row.superseded_at)


def valid_at(row: Fact, t: datetime) -> bool:
    return row.valid_from <= t and (row.valid_to is None or t < row.valid_to)


def visible(row: Fact, when: When, now: datetime) -> bool:
    return believed_at(row, when.as_of) and valid_at(row, when.valid_at or now)


def parse_time(value: object, field: str) -> datetime | None:
    """ISO 8601 (date or date-time, `Z` allowed); naive times are UTC."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{field} must be a string, got {type(value).__name__}.", _TIME_HINT)
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidInput(f"{field} is not an ISO 8601 date or time: {value[:60]!r}.", _TIME_HINT) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    if not datetime(1900, 1, 1, tzinfo=UTC) <= parsed <= datetime(9999, 1, 1, tzinfo=UTC):
        raise InvalidInput(f"{field} is out of range: {value[:60]!r}.", _TIME_HINT)
    return parsed


_TIME_HINT = "Use ISO 8601, for example 2026-03-01 or 2026-03-01T14:30:00Z."
