"""Compact tool schemas: tools/list is paid for in every session's context, so drop what a model
does not need (titles, `anyOf [T, null]` for optional arguments, `default: null`). Pure."""

from __future__ import annotations

from typing import Any


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _property(prop) for name, prop in value.items()}
        else:
            out[key] = value
    return out


def _property(prop: dict[str, Any]) -> dict[str, Any]:
    prop = {k: v for k, v in prop.items() if k != "title"}
    options = prop.get("anyOf")
    if isinstance(options, list):
        non_null = [o for o in options if o != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(options):
            del prop["anyOf"]
            prop = {**_property(non_null[0]), **prop}
    if "default" in prop and prop["default"] is None:
        del prop["default"]
    if isinstance(prop.get("items"), dict):
        prop["items"] = _property(prop["items"])
    return prop
