"""Tokens and user names, without a database: format, hashing, expiry parsing."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest

from lore.core.errors import InvalidInput
from lore.store import auth

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_a_secret_is_long_random_and_only_its_sha256_is_kept() -> None:
    secrets = {auth.new_secret() for _ in range(200)}
    assert len(secrets) == 200
    for secret in secrets:
        assert secret.startswith("lore_") and len(secret) == 48 and auth.looks_like_token(secret)
        assert auth.digest(secret) == hashlib.sha256(secret.encode()).digest()
    assert not auth.looks_like_token("lore_short")
    assert not auth.looks_like_token("Bearer " + next(iter(secrets)))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30d", NOW + timedelta(days=30)),
        ("12h", NOW + timedelta(hours=12)),
        ("90min", NOW + timedelta(minutes=90)),
        ("2w", NOW + timedelta(weeks=2)),
        ("1y", NOW + timedelta(days=365)),
        ("2027-01-31", datetime(2027, 1, 31, tzinfo=UTC)),
        ("2027-01-31T08:00:00+02:00", datetime(2027, 1, 31, 6, tzinfo=UTC)),
        ("never", None),
        (None, None),
    ],
)
def test_expiry_reads_durations_dates_and_never(text: str | None, expected: datetime | None) -> None:
    assert auth.parse_expiry(text, NOW) == expected


@pytest.mark.parametrize("text", ["soon", "0d", "2020-01-01", "-3d", "30 days ago"])
def test_expiry_that_is_unreadable_or_past_is_refused_with_the_fix(text: str) -> None:
    with pytest.raises(InvalidInput) as err:
        auth.parse_expiry(text, NOW)
    assert "30d" in err.value.hint


@pytest.mark.parametrize("name", ["alice", "bob.smith", "carol@example.com", "d-1_x", "A" * 64])
def test_user_names(name: str) -> None:
    assert auth.check_user(name) == name


@pytest.mark.parametrize("name", ["", "a/b", "-x", ".x", "a b", "A" * 65, "émile"])
def test_bad_user_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidInput):
        auth.check_user(name)


def test_status_of_a_token() -> None:
    base = auth.Token(1, "alice", "personal", None, NOW, None, None, None)
    assert base.status(NOW) == "active"
    assert auth.Token(1, "a", "personal", None, NOW, NOW, None, None).status(NOW) == "expired"
    assert auth.Token(1, "a", "personal", None, NOW, None, NOW, None).status(NOW) == "revoked"
