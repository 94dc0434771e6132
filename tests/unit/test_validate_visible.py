"""Trust round 3, item 7: a statement of only zero-width characters was accepted (and injected as an
empty-looking line). Every text field needs one character a person can see."""

from __future__ import annotations

import pytest

from lore.core import validate
from lore.core.errors import InvalidInput


@pytest.mark.parametrize(
    "value", ["\u200b\u200b\u200b", "\u2060\ufeff", "\u200d\u200c", "\u200b\u00a0\u202f", "\u0301"]
)
def test_invisible_text_is_refused_with_the_field(value: str) -> None:
    with pytest.raises(InvalidInput, match="statement has no visible character"):
        validate.statement(value)
    with pytest.raises(InvalidInput, match="body has no visible character"):
        validate.body(value)


def test_text_with_one_visible_character_passes() -> None:
    assert validate.statement("\u200bx\u200b") == "\u200bx\u200b"
    assert validate.statement("é") == "é" and validate.statement("🙂") == "🙂"
