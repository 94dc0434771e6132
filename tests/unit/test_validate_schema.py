"""Input limits and the compact tool schema."""

from __future__ import annotations

import pytest

from lore.core import validate
from lore.core.errors import InvalidInput
from lore.mcp.schema import compact, compact_output


def test_ids_round_trip() -> None:
    assert validate.item_id("f_12") == ("f", 12)
    assert validate.item_id(" n_7 ") == ("n", 7)
    for bad in ["12", "f_", "x_1", "f_1; drop", "f_" + "9" * 30]:
        with pytest.raises(InvalidInput):
            validate.item_id(bad)
    with pytest.raises(InvalidInput, match="not a note id"):
        validate.item_id("f_1", expect="n")


def test_limits() -> None:
    assert validate.statement("  a fact  ") == "a fact"
    with pytest.raises(InvalidInput, match="1,001 characters"):
        validate.statement("x" * 1001)
    with pytest.raises(InvalidInput, match="32 KiB"):
        validate.body("é" * (16 * 1024 + 1))  # counted in bytes, not characters
    with pytest.raises(InvalidInput, match="lone surrogate"):
        validate.statement("bad \ud800 text")
    assert validate.tags(["Deploy", "deploy", "ci"]) == ["deploy", "ci"]
    with pytest.raises(InvalidInput, match="list of strings"):
        validate.tags("deploy")


def test_compact_schema_drops_noise() -> None:
    schema = {
        "title": "xArguments",
        "type": "object",
        "properties": {
            "a": {"title": "A", "type": "string"},
            "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "B"},
            "c": {
                "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                "default": None,
            },
            "d": {"type": "integer", "default": 5, "title": "D"},
        },
        "required": ["a"],
    }
    assert compact(schema) == {
        "type": "object",
        "properties": {
            "a": {"type": "string"},
            "b": {"type": "string"},
            "c": {"items": {"type": "string"}, "type": "array"},
            "d": {"type": "integer", "default": 5},
        },
        "required": ["a"],
    }


def test_compact_output_schema_keeps_the_same_values() -> None:
    """Titles go and `$defs` are written where used; a nullable value stays `anyOf [T, null]` (a
    single-type client refuses `type: [T, "null"]`); a property named `title` stays; an anyOf of two
    real types is left alone."""
    schema = {
        "title": "Sent",
        "type": "object",
        "$defs": {
            "Message": {
                "title": "Message",
                "type": "object",
                "properties": {
                    "title": {"title": "Title", "anyOf": [{"type": "string"}, {"type": "null"}]},
                    "n": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                },
                "required": ["title"],
            }
        },
        "properties": {
            "reply": {"anyOf": [{"$ref": "#/$defs/Message"}, {"type": "null"}]},
            "all": {"type": "array", "items": {"$ref": "#/$defs/Message"}},
        },
        "required": ["all"],
    }
    message = {
        "type": "object",
        "properties": {
            "title": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "n": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        },
        "required": ["title"],
    }
    assert compact_output(schema) == {
        "type": "object",
        "properties": {
            "reply": {"anyOf": [message, {"type": "null"}]},
            "all": {"type": "array", "items": message},
        },
        "required": ["all"],
    }
