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


def compact_output(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's output schema, smaller and still the same set of values: no titles, and each `$defs`
    entry written where it is used. A nullable value stays `anyOf [T, {"type": "null"}]`, never
    `type: [T, "null"]`: a client that reads one type per schema (Gemini CLI's, the Inspector's strict
    mode) rejects or warns about the array form."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        if isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
            target = defs[node["$ref"].removeprefix("#/$defs/")]
            return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs"):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {
                    name: walk(prop) for name, prop in value.items()
                }  # a property may be named "title"
            else:
                out[key] = walk(value)
        return out

    compacted: dict[str, Any] = walk(schema)
    return compacted
