"""Editing one table of a user's TOML file (Codex's `config.toml`) without disturbing the rest.

The standard library reads TOML but does not write it, and a user's config carries comments and
an order worth keeping. So lore edits text: it replaces (or appends) the block that starts at the
table's `[header]`, and removes it on uninstall. Every edit is then checked by parsing the result
with `tomllib` and comparing it to what the edit means; a file written in a form this cannot edit
safely (the table as an inline table or dotted keys, say) is refused with the snippet to add by
hand. Nothing is guessed.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from pathlib import Path
from typing import Any

from lore.core.errors import ConfigError

Key = tuple[str, ...]
_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def parse(text: str | None, path: Path) -> dict[str, Any]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid TOML: {exc}",
            f"Fix or move {path} aside, then run the command again; lore did not change it.",
        ) from None


def value(v: Any) -> str:
    """A TOML value for a str, bool, int, list or (inline) table."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        # JSON string escapes (\" \\ \n \t \uXXXX ...) are all valid in a TOML basic string.
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def key(part: str) -> str:
    return part if _BARE.match(part) else json.dumps(part, ensure_ascii=False)


def block(table: Key, values: dict[str, Any]) -> str:
    lines = ["[" + ".".join(key(p) for p in table) + "]"]
    lines += [f"{key(k)} = {value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def set_table(text: str | None, table: Key, values: dict[str, Any], path: Path) -> str:
    """`text` with `[table]` holding exactly `values` (its old block and sub-tables replaced)."""
    original = parse(text, path)
    lines = (text or "").splitlines(keepends=True)
    spans = _spans(lines, table)
    new_block = block(table, values)
    if spans:
        start = spans[0][0]
        kept = _without(lines, spans)
        kept[start:start] = [new_block if _ends_blank(kept[start:]) else new_block + "\n"]
        result = "".join(kept)
    else:
        body = "".join(lines)
        if body and not body.endswith("\n"):
            body += "\n"
        result = body + ("\n" if body.strip() else "") + new_block
    expected = copy.deepcopy(original)
    _put(expected, table, values)
    _verify(result, expected, path, new_block)
    return result


def remove_table(text: str | None, table: Key, path: Path) -> str:
    """`text` without `[table]` and its sub-tables; unchanged when it is not there."""
    original = parse(text, path)
    if _get(original, table) is None:
        return text or ""
    lines = (text or "").splitlines(keepends=True)
    spans = _spans(lines, table)
    result = "".join(_without(lines, spans))
    if spans and spans[-1][1] == len(lines):  # lore's block was last: drop the blank line before it
        result = result.rstrip("\n") + "\n" if result.strip() else ""
    expected = copy.deepcopy(original)
    _pop(expected, table)
    _verify(result, expected, path, None)
    return result


def get(data: dict[str, Any], table: Key) -> Any:
    return _get(data, table)


# --- helpers ------------------------------------------------------------------------------------


def _header(line: str) -> Key | None:
    """The key of a `[table]` or `[[array]]` header line, else None."""
    s = line.strip()
    if not s.startswith("["):
        return None
    double = s.startswith("[[")
    inner, i, quote = [], 2 if double else 1, ""
    while i < len(s):
        c = s[i]
        if quote:
            if c == "\\" and quote == '"':
                inner.append(s[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "]":
            break
        inner.append(c)
        i += 1
    else:
        return None
    return tuple(_split_key("".join(inner)))


def _split_key(raw: str) -> list[str]:
    parts, current, quote, i = [], "", "", 0
    while i < len(raw):
        c = raw[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < len(raw):
                current += raw[i : i + 2]
                i += 2
                continue
            current += c
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
            current += c
        elif c == ".":
            parts.append(current)
            current = ""
        else:
            current += c
        i += 1
    parts.append(current)
    out = []
    for part in (p.strip() for p in parts):
        if part.startswith('"'):
            out.append(json.loads(part))
        elif part.startswith("'"):
            out.append(part[1:-1])
        else:
            out.append(part)
    return out


def _spans(lines: list[str], table: Key) -> list[tuple[int, int]]:
    """[start, end) line ranges of the blocks of `table` and its sub-tables."""
    spans: list[tuple[int, int]] = []
    current: int | None = None
    for i, line in enumerate(lines):
        header = _header(line)
        if header is None:
            continue
        if current is not None:
            spans.append((current, _trim(lines, current, i)))
            current = None
        if header[: len(table)] == table:
            current = i
    if current is not None:
        spans.append((current, _trim(lines, current, len(lines))))
    return spans


def _trim(lines: list[str], start: int, end: int) -> int:
    """Blank and comment lines at the end of a block belong to what follows: keep them."""
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _without(lines: list[str], spans: list[tuple[int, int]]) -> list[str]:
    """`lines` without the spans, and without the blank lines that would then double up."""
    drop = {i for start, end in spans for i in range(start, end)}
    kept: list[str] = []
    after_span = False
    for i, line in enumerate(lines):
        if i in drop:
            after_span = True
            continue
        if after_span and not line.strip() and (not kept or not kept[-1].strip()):
            continue
        after_span = after_span and not line.strip()
        kept.append(line)
    return kept


def _ends_blank(rest: list[str]) -> bool:
    return not rest or not rest[0].strip()


def _get(data: Any, table: Key) -> Any:
    for part in table:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _put(data: dict[str, Any], table: Key, values: dict[str, Any]) -> None:
    for part in table[:-1]:
        data = data.setdefault(part, {})
    data[table[-1]] = copy.deepcopy(values)


def _pop(data: dict[str, Any], table: Key) -> None:
    parent = _get(data, table[:-1]) if len(table) > 1 else data
    if isinstance(parent, dict):
        parent.pop(table[-1], None)


def _prune(data: Any) -> Any:
    """Empty tables dropped (a header-less parent disappears with its last child)."""
    if isinstance(data, dict):
        pruned = {k: _prune(v) for k, v in data.items()}
        return {k: v for k, v in pruned.items() if v != {} or not isinstance(data[k], dict)}
    return data


def _verify(result: str, expected: dict[str, Any], path: Path, snippet: str | None) -> None:
    try:
        actual = tomllib.loads(result)
    except tomllib.TOMLDecodeError:
        actual = None
    if actual is None or _prune(actual) != _prune(expected):
        by_hand = f"add this to {path} yourself:\n{snippet}" if snippet else f"edit {path} yourself"
        raise ConfigError(
            f"{path} defines this table in a form lore does not edit (an inline table or dotted keys?); "
            "lore did not change it.",
            f"Write it as a [table] block and run the command again, or {by_hand}",
        )
