"""lore.core.redact: what is printed or logged about a database URL never holds its password. Trust
round 4, item 6: nothing tested `redact` directly (replacing it by the identity passed 436 tests), and
it missed an empty user, a raw `@` in the password and a password holding a space."""

from __future__ import annotations

import pytest

from lore.core.redact import redact

PASSWORD = "Hx7-q9!Lm"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"postgresql://app:{PASSWORD}@db.internal:5432/lore", "postgresql://app:***@db.internal:5432/lore"),
        (f"postgresql://:{PASSWORD}@db.internal/lore", "postgresql://:***@db.internal/lore"),
        (f"redis://:{PASSWORD}@cache:6379/0", "redis://:***@cache:6379/0"),
        (f"postgres://app:p@ss{PASSWORD}@db/lore", "postgres://app:***@db/lore"),
        (f"postgres://app:my {PASSWORD}@db/lore", "postgres://app:***@db/lore"),
        (f"host=db user=app password={PASSWORD} dbname=lore", "host=db user=app password=*** dbname=lore"),
        (f"host=db password='my {PASSWORD}' dbname=lore", "host=db password=*** dbname=lore"),
        (
            f"postgresql://db/lore?user=app&password={PASSWORD}&sslmode=require",
            "postgresql://db/lore?user=app&password=***&sslmode=require",
        ),
        (
            f"connection failed: postgresql://app:{PASSWORD}@db:5432/lore: timeout\nnext line",
            "connection failed: postgresql://app:***@db:5432/lore: timeout\nnext line",
        ),
    ],
)
def test_the_password_is_masked_and_the_rest_kept(text: str, shown: str) -> None:
    assert redact(text) == shown
    assert PASSWORD not in redact(text) and "Hx7" not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "postgresql://app@db.internal:5432/lore",
        "postgresql:///lore?host=/tmp/lore-run",
        "https://lore.example.test:8443/mcp and mail @ops on call",
        "a plain sentence about passwords, with no value",
    ],
)
def test_text_without_a_password_is_unchanged(text: str) -> None:
    assert redact(text) == text
