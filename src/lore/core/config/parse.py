"""The config file's text to a Config: TOML parsed with `tomllib`, every key and value validated.

Light on purpose (stdlib only): the session-start hook imports it. Every error names the file, the
line where it can be found (tomllib reports none: `_Locator` finds it), and the fix.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any

from lore.core.config.model import (
    DEFAULT_HANDOFF_HOURS,
    DEFAULT_MAX_CHARS,
    DEFAULT_RETENTION_DAYS,
    MAX_HANDOFF_HOURS,
    MAX_MAX_CHARS,
    MAX_RETENTION_DAYS,
    MIN_MAX_CHARS,
    Config,
    EmbedderSettings,
    SpaceConfig,
    foreign,
)
from lore.core.errors import ConfigError
from lore.core.pooling import POOLERS

_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")
# Another user's space in `reads_from` / `accepts_from` (a teammate's, on a server with sign-in):
# `<user>/<space>`. It takes effect only when that user's config names this space back (lore.core.links).
FOREIGN_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}/[A-Za-z0-9_.-]{1,64}")
MAX_FOREIGN = 32
_KNOWN = {
    "": ("default_space", "space", "database", "session_start", "embedder", "log"),
    "space": ("id", "paths", "remotes", "reads_from", "accepts_from"),
    "database": ("url", "listen_url", "pooler"),
    "session_start": ("max_chars", "handoff_max_age_hours"),
    "log": ("retention_days",),
    "embedder": ("name", "model", "base_url", "api_key_env", "dimensions", "min_similarity", "second"),
}
_HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")


def parse_config(text: str, path: Path) -> Config:
    """A config file's text (at `path`, named in every error) as a Config; raises ConfigError."""
    text = text.removeprefix("\ufeff")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(exc, text, path) from None
    loc = _Locator(text)
    _check_keys(data, "", "the top level", loc.region(""), loc, path)
    spaces = _spaces(data, loc, path)
    known = ", ".join(s.id for s in spaces) or "none"
    default = data.get("default_space")
    if default is not None and (not isinstance(default, str) or default not in {s.id for s in spaces}):
        line = loc.key_line(loc.region(""), "default_space")
        hint = f"set it to a configured id ({known}), or add a [[space]] with that id"
        raise _error(path, line, f"default_space names unknown space {default!r}", hint)
    url, listen_url, pooler = _database(data, loc, path)
    max_chars, hours = _session_start(data, loc, path)
    days = _table(data, "log", loc, path).get("retention_days", DEFAULT_RETENTION_DAYS)
    if type(days) is not int or not 1 <= days <= MAX_RETENTION_DAYS:
        line = loc.key_line(loc.region("log"), "retention_days")
        what = f"log.retention_days must be an integer from 1 to {MAX_RETENTION_DAYS}"
        raise _error(path, line, f"{what}, not {days!r}", f"set it to e.g. {DEFAULT_RETENTION_DAYS}")
    embedder = _embedder(data, loc, path)
    return Config(path, default, spaces, url, max_chars, embedder, hours, days, listen_url, pooler)


def _spaces(data: dict[str, Any], loc: _Locator, path: Path) -> tuple[SpaceConfig, ...]:
    """The [[space]] tables: each valid, ids unique, every `reads_from` / `accepts_from` naming a
    configured space (or, well-formed, another user's)."""
    raw_spaces = data.get("space", [])
    if not isinstance(raw_spaces, list):
        hint = "write each space as a [[space]] table (double brackets)"
        raise _error(
            path, loc.key_line(loc.region(""), "space"), "`space` must be a list of [[space]] tables", hint
        )
    spaces = [_parse_space(raw, i, loc, path) for i, raw in enumerate(raw_spaces)]

    first: dict[str, int] = {}
    for i, space in enumerate(spaces):
        if space.id in first:
            line = loc.value_line(loc.space_region(i), "id", space.id)
            before = loc.value_line(loc.space_region(first[space.id]), "id", space.id)
            what = f"duplicate space id {space.id!r}" + (
                f" (first defined on line {before})" if before else ""
            )
            raise _error(path, line, what, "give each [[space]] its own id, or merge the two tables into one")
        first[space.id] = i
    known = ", ".join(first) or "none"
    named_foreign = 0
    for i, space in enumerate(spaces):
        for key in ("reads_from", "accepts_from"):
            for ref in getattr(space, key):
                if foreign(ref):
                    named_foreign += 1
                    _check_foreign(ref, named_foreign, loc.value_line(loc.space_region(i), key, ref), path)
                    continue
                if ref not in first:
                    line = loc.value_line(loc.space_region(i), key, ref)
                    hint = f'use a configured id ({known}) or add a [[space]] with id = "{ref}"'
                    raise _error(path, line, f"space {space.id!r}: {key} names unknown space {ref!r}", hint)
    return tuple(spaces)


def _database(data: dict[str, Any], loc: _Locator, path: Path) -> tuple[str | None, str | None, str | None]:
    """`[database]`: (url, listen_url, pooler), each None when left out."""
    database = _table(data, "database", loc, path)
    url = database.get("url")
    if url is not None and (not isinstance(url, str) or not url.strip()):
        line = loc.key_line(loc.region("database"), "url")
        raise _type_error(path, line, "database.url", "a non-empty PostgreSQL URL string")
    listen_url = database.get("listen_url")
    if listen_url is not None and (not isinstance(listen_url, str) or not listen_url.strip()):
        line = loc.key_line(loc.region("database"), "listen_url")
        raise _type_error(path, line, "database.listen_url", 'a non-empty PostgreSQL URL string (or "off")')
    pooler = database.get("pooler")
    if pooler is not None and pooler not in POOLERS:
        line = loc.key_line(loc.region("database"), "pooler")
        choices = ", ".join(f'"{p}"' for p in POOLERS)
        what = f"database.pooler must be one of {choices}, not {pooler!r}"
        raise _error(path, line, what, 'set it to "auto" (or leave it out)')
    return url, listen_url, pooler


def _session_start(data: dict[str, Any], loc: _Locator, path: Path) -> tuple[int, int]:
    """`[session_start]`: (max_chars, handoff_max_age_hours)."""
    start = _table(data, "session_start", loc, path)
    max_chars = start.get("max_chars", DEFAULT_MAX_CHARS)
    if type(max_chars) is not int or not MIN_MAX_CHARS <= max_chars <= MAX_MAX_CHARS:
        line = loc.key_line(loc.region("session_start"), "max_chars")
        what = f"session_start.max_chars must be an integer from {MIN_MAX_CHARS} to {MAX_MAX_CHARS}"
        hint = f"set it to e.g. {DEFAULT_MAX_CHARS} (Claude Code drops session-start text above 10,000)"
        raise _error(path, line, f"{what}, not {max_chars!r}", hint)
    hours = start.get("handoff_max_age_hours", DEFAULT_HANDOFF_HOURS)
    if type(hours) is not int or not 0 <= hours <= MAX_HANDOFF_HOURS:
        line = loc.key_line(loc.region("session_start"), "handoff_max_age_hours")
        what = f"session_start.handoff_max_age_hours must be an integer from 0 to {MAX_HANDOFF_HOURS}"
        hint = f"set it to e.g. {DEFAULT_HANDOFF_HOURS} (a week), or 0 to never show the last session"
        raise _error(path, line, f"{what}, not {hours!r}", hint)
    return max_chars, hours


def _embedder(data: dict[str, Any], loc: _Locator, path: Path) -> EmbedderSettings:
    table = _table(data, "embedder", loc, path)
    region = loc.region("embedder")
    for key in ("name", "model", "base_url", "api_key_env", "second"):
        if key in table and (not isinstance(table[key], str) or not table[key].strip()):
            raise _type_error(path, loc.key_line(region, key), f"embedder.{key}", "a non-empty string")
    dims = table.get("dimensions")
    if dims is not None and (type(dims) is not int or dims < 1):
        line = loc.key_line(region, "dimensions")
        raise _type_error(path, line, "embedder.dimensions", "a positive integer")
    floor = table.get("min_similarity")
    if floor is not None and (type(floor) not in (int, float) or not 0 <= floor < 1):
        line = loc.key_line(region, "min_similarity")
        raise _type_error(path, line, "embedder.min_similarity", "a number from 0 to 1 (e.g. 0.3)")
    return EmbedderSettings(
        table.get("name"),
        table.get("model"),
        table.get("base_url"),
        table.get("api_key_env"),
        dims,
        None if floor is None else float(floor),
        table.get("second"),
    )


# --- validation helpers -------------------------------------------------------------------------


def _parse_space(raw: Any, index: int, loc: _Locator, path: Path) -> SpaceConfig:
    region = loc.space_region(index)
    label = f"[[space]] #{index + 1}"
    if not isinstance(raw, dict):
        raise _error(
            path, region and region[0], f"{label} must be a table", "write it as [[space]] with an id"
        )
    _check_keys(raw, "space", label, region, loc, path)
    space_id = raw.get("id")
    if not isinstance(space_id, str) or not _ID_RE.fullmatch(space_id):
        line = loc.key_line(region, "id") or (region and region[0])
        what = f"{label} has {'no id' if space_id is None else f'the invalid id {space_id!r}'}"
        hint = 'give it an id of 1-64 letters, digits, "_", "." or "-", such as id = "work"'
        raise _error(path, line, what, hint)
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("paths", "remotes", "reads_from", "accepts_from"):
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            line = loc.key_line(region, key)
            raise _type_error(path, line, f"space {space_id!r}: {key}", "a list of non-empty strings")
        lists[key] = tuple(dict.fromkeys(v.strip() for v in value))
    for pattern in lists["paths"]:
        line = loc.value_line(region, "paths", pattern)
        if not (pattern.startswith("~") or os.path.isabs(pattern)):
            hint = f'write it as an absolute path or start it with ~ (e.g. "~/{pattern}")'
            raise _error(path, line, f"space {space_id!r}: path {pattern!r} is relative", hint)
        if "*" in pattern[:-1]:
            hint = 'only a trailing * is supported (e.g. "~/codes/acme-*"): list the directories instead'
            raise _error(path, line, f"space {space_id!r}: path {pattern!r} has a * before its end", hint)
    return SpaceConfig(space_id, lists["paths"], lists["remotes"], lists["reads_from"], lists["accepts_from"])


def _check_foreign(ref: str, count: int, line: int | None, path: Path) -> None:
    if not FOREIGN_RE.fullmatch(ref):
        hint = 'name another user\'s space as "<user>/<space>", e.g. "bob/work"'
        raise _error(path, line, f"{ref!r} is not a space id, nor another user's space", hint)
    if count > MAX_FOREIGN:
        raise _error(path, line, f"more than {MAX_FOREIGN} entries name other users' spaces", "name fewer")


def _table(data: dict[str, Any], name: str, loc: _Locator, path: Path) -> dict[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise _type_error(path, loc.key_line(loc.region(""), name), name, f"a [{name}] table")
    _check_keys(value, name, f"[{name}]", loc.region(name), loc, path)
    return value


def _check_keys(
    table: dict[str, Any], kind: str, label: str, region: tuple[int, int] | None, loc: _Locator, path: Path
) -> None:
    known = _KNOWN[kind]
    for key in table:
        if key not in known:
            line = loc.key_line(region, key) or loc.header(f"{kind}.{key}" if kind else key)
            hint = f"fix the spelling or remove it; the known keys there are: {', '.join(known)}"
            raise _error(path, line, f"unknown key {key!r} in {label}", hint)


def _toml_error(exc: tomllib.TOMLDecodeError, text: str, path: Path) -> ConfigError:
    message = str(exc)
    found = re.search(r"\(at line (\d+), column \d+\)", message)
    line = int(found.group(1)) if found else None
    what = re.sub(r"\s*\(at line \d+, column \d+\)", "", message).replace(
        "(at end of document)", "at the end"
    )
    lines = text.splitlines()
    shown = f": {lines[line - 1].strip()}" if line and line <= len(lines) and lines[line - 1].strip() else ""
    where = f" on line {line}" if line else " (look for an unclosed [, { or quote)"
    hint = f"fix the syntax{where} (https://toml.io), or move the file away and run `lore init`"
    return _error(path, line, f"invalid TOML: {what}{shown}", hint)


def _type_error(path: Path, line: int | None, what: str, expected: str) -> ConfigError:
    return _error(path, line, f"{what} must be {expected}", f"change it to {expected}")


def _error(path: Path, line: int | None, what: str, hint: str) -> ConfigError:
    return ConfigError(f"{path}:{line}: {what}" if line else f"{path}: {what}", hint)


class _Locator:
    """Best-effort line numbers for keys and values (tomllib does not report them)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        self.headers: list[tuple[int, str, bool]] = []  # (1-based line, table name, is [[array]])
        for number, line in enumerate(self.lines, 1):
            if m := _HEADER_RE.match(line):
                self.headers.append(
                    (number, m.group(2).replace('"', "").replace(" ", ""), m.group(1) == "[[")
                )

    def _end(self, line: int) -> int:
        return next((n for n, _, _ in self.headers if n > line), len(self.lines) + 1)

    def region(self, table: str) -> tuple[int, int] | None:
        """Lines [start, end) of a plain table; "" is the top level before the first header."""
        if not table:
            return 1, self.headers[0][0] if self.headers else len(self.lines) + 1
        line = self.header(table)
        return (line, self._end(line)) if line else None

    def space_region(self, index: int) -> tuple[int, int] | None:
        starts = [n for n, name, array in self.headers if array and name == "space"]
        return (starts[index], self._end(starts[index])) if index < len(starts) else None

    def header(self, table: str) -> int | None:
        return next((n for n, name, _ in self.headers if name == table), None)

    def key_line(self, region: tuple[int, int] | None, key: str) -> int | None:
        """The line of `key = ...` in the region; without one, a dotted `table.key = ...` anywhere."""
        name = rf"(?:{re.escape(key)}|\"{re.escape(key)}\")\s*="
        if region is None:
            return self._search((1, len(self.lines) + 1), re.compile(rf"^\s*[\w.\"-]*\.\s*{name}"))
        return self._search(region, re.compile(rf"^\s*{name}"))

    def value_line(self, region: tuple[int, int] | None, key: str, value: str) -> int | None:
        """The line of `value` (quoted) at or after `key`'s line in the region, else the key's line."""
        start = self.key_line(region, key)
        if start is None or region is None:
            return start
        quoted = re.compile(rf"[\"']{re.escape(value)}[\"']")
        return self._search((start, region[1]), quoted) or start

    def _search(self, region: tuple[int, int] | None, pattern: re.Pattern[str]) -> int | None:
        if region is None:
            return None
        start, end = region
        return next((n for n in range(start, end) if pattern.search(self.lines[n - 1])), None)
