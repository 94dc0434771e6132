"""The scan itself: every rule over the text and over each copy `normalise` makes of it, a token
with spacing inside joined up again from its prefix, and what long base64 runs decode to. Spans
already claimed are not claimed again, so the more specific rule's kind is the one reported."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from lore.core.secrets import judge, rules
from lore.core.secrets.normalise import View, normalised, percent_decoded
from lore.core.secrets.rule import Rule, Spaced

_MAX_DEPTH = 2  # base64 inside base64, and no deeper


@dataclass(frozen=True)
class Finding:
    kind: str  # what it looks like, e.g. "GitHub token"
    start: int  # offsets of the credential itself in the scanned text
    end: int
    line: int  # 1-based
    preview: str  # the first few characters only, never the whole credential

    def describe(self) -> str:
        return f"{self.kind} {self.preview!r} on line {self.line}"


def scan(text: str) -> list[Finding]:
    """Every likely credential in `text`, in order of position; overlapping matches count once.

    The rules run on the text as it is, then on a normalised copy when that differs (NFKC, which
    folds full-width and other compatibility forms to ASCII, with invisible format characters such
    as zero-width spaces removed), then on a copy with its percent-escapes decoded, then once more
    from each token prefix with the spacing inside the token taken out, and on what every long base64
    run decodes to. Offsets are always in `text`."""
    return _scan(text, 0)


def _scan(text: str, depth: int) -> list[Finding]:
    found = _Found(text)
    plain = View(text, [])
    _match_rules(plain, found)
    view = normalised(text)
    if view is not None:
        _match_rules(view, found)
    decoded = percent_decoded(text)
    if decoded is not None:
        _match_rules(decoded, found)
    _match_spaced(view or plain, found)
    if depth < _MAX_DEPTH:
        _match_encoded(view or plain, found, depth)
    return sorted(found.items, key=lambda f: f.start)


class _Found:
    """Findings in one text; a span already claimed (by a more specific rule, or an earlier pass)
    is not claimed again."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[Finding] = []
        self.taken: list[tuple[int, int]] = []

    def covers(self, start: int, end: int) -> bool:
        return any(start < e and s < end for s, e in self.taken)

    def add(self, kind: str, start: int, end: int, value: str) -> None:
        if end <= start or self.covers(start, end):
            return
        self.taken.append((start, end))
        self.items.append(Finding(kind, start, end, self.text.count("\n", 0, start) + 1, _preview(value)))


# Which rules can match a text is decided by their hints (rule.Rule.hints), about 270 substrings: each
# searched for in a 32 KB text cost 2.7 ms in all. So each hint is looked for only when its rarest
# character (in this order, rarest first) is in the text: most hints hold a `_`, `-`, `.` or digit.
_RARITY = "~%@|=:_+/\\0123456789qjzxkvbpygfwm-.ucldrhsnioate "
_ALL_HINTS = {hint for rule in rules.RULES for hint in rule.hints}
_BY_KEY: dict[str, list[str]] = {}
for _hint in sorted(_ALL_HINTS):
    _key = min(_hint, key=lambda c: _RARITY.find(c) % (len(_RARITY) + 1))
    _BY_KEY.setdefault(_key, []).append(_hint)


def _hints_in(text: str) -> set[str]:
    """The rules' hints that `text` (lower-cased) holds."""
    lowered = text.lower()
    present: set[str] = set()
    for key, hints in _BY_KEY.items():
        if key in lowered:
            present.update(hint for hint in hints if hint in lowered)
    return present


def _match_rules(view: View, found: _Found) -> None:
    present = _hints_in(view.text)
    for rule in rules.RULES:
        if rule.hints and present.isdisjoint(rule.hints):
            continue
        if rule.gated_out(view.text):
            continue
        for match in rule.pattern.finditer(view.text):
            value = match.group(rule.group)
            if rule.accept is not None and not rule.accept(value):
                continue
            if rule.check is not None and not rule.check(match):
                continue
            start, end = match.span(rule.group)
            found.add(rule.kind, view.start(start), view.end(end), value)


# Where a token may start, for the spacing pass: every form of the token rules' prefixes (the character
# before is checked in `_match_spaced`), longest first.
_FORMS = sorted(
    {f for rule in rules.TOKEN_RULES if rule.spaced for f in rule.spaced.forms}, key=len, reverse=True
)
_PREFIX = re.compile("|".join(map(re.escape, _FORMS)))
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_]")


def _by_form() -> dict[str, list[tuple[Rule, Spaced, int]]]:
    """Each prefix form -> the token rules that a text starting with it can match (a text starting
    with `sk-ant-` starts with `sk-` too), with the width of that rule's prefix."""
    table: dict[str, list[tuple[Rule, Spaced, int]]] = {}
    for form in _FORMS:
        for rule in rules.TOKEN_RULES:
            assert rule.spaced is not None
            width = next((len(f) for f in rule.spaced.forms if form.startswith(f)), 0)
            if width:
                table.setdefault(form, []).append((rule, rule.spaced, width))
    return table


_BY_FORM = _by_form()
_PIECE = re.compile(r"\S+")
_WORDLIKE = re.compile(r"[A-Z]?[a-z]+|[0-9]{1,4}")
_SUBPIECE = re.compile(r"[-_]")  # hyphenated and snake_case words count as words
_MAX_GAP = 3  # spacing characters between two pieces of one token (a line break and an indent)
_MAX_PIECES = 48


def _match_spaced(view: View, found: _Found) -> None:
    """A token with spacing inside (a space or tab, a line break, groups of four): from each prefix,
    join the pieces that follow (made of the token's characters) until the token rule matches across
    a gap. What follows the prefix must look random (a digit and a letter, mostly not words), so prose
    after `ghp_` never joins up. Pieces are read only as far as a rule needs them (at most 48, and
    never past another prefix), so a text of nothing but prefixes stays linear."""
    text = view.text
    if _hints_in(text).isdisjoint(rules.TOKEN_HINTS):
        return
    for prefix in _PREFIX.finditer(text):
        at = prefix.start()
        if at and _TOKEN_CHAR.match(text, at - 1):
            continue  # inside a word
        if found.covers(view.start(at), view.end(prefix.end())):
            continue
        for rule, spaced, width in _BY_FORM[prefix.group()]:
            _join_pieces(view, found, rule, spaced, _pieces(text, at), width)


def _pieces(text: str, at: int) -> Iterator[tuple[int, int]]:
    """The runs of non-space characters from `at`, while the gaps between them stay small."""
    last = -1
    for count, piece in enumerate(_PIECE.finditer(text, at, at + 800)):
        if count >= _MAX_PIECES or (last >= 0 and piece.start() - last > _MAX_GAP):
            return
        yield piece.span()
        last = piece.end()


def _join_pieces(
    view: View, found: _Found, rule: Rule, spaced: Spaced, pieces: Iterable[tuple[int, int]], prefix: int
) -> None:
    text = view.text
    joined = ""
    parts: list[tuple[int, int]] = []  # (where in `joined`, where in the text) of each piece's characters
    tries = 3
    for k, (start, end) in enumerate(pieces):
        if k == 0:
            joined = text[start : start + prefix]
            start += prefix
        elif _PREFIX.match(text, start):
            return  # another token starts here: that prefix gets its own try
        run = spaced.alphabet.match(text, start, end)
        size = run.end() - start if run else 0
        if size == 0 and k > 0:
            return
        parts.append((len(joined), start))
        joined += text[start : start + size]
        if k > 0 and len(joined) - prefix >= spaced.shortest:
            # Every length from here on is tried (the token may end at any later gap) until one passes.
            match = rule.pattern.match(joined)
            if match is not None:
                if _judge_joined(view, found, rule, joined, parts, prefix, match):
                    return
            else:
                tries -= 1
                if not tries:
                    return
        if start + size < end:
            return  # a character the token cannot hold ends it


def _judge_joined(
    view: View,
    found: _Found,
    rule: Rule,
    joined: str,
    parts: list[tuple[int, int]],
    prefix: int,
    match: re.Match[str],
) -> bool:
    """Add the finding when the joined token passes its rule and does not read as words: pieces of
    three characters or more (split at `-` and `_` too) that look like words or short numbers hold at
    most half of its characters, and it has a digit and a letter."""
    value = match.group()
    if rule.accept is not None and not rule.accept(value):
        return False
    bounds = [a for a, _ in parts] + [len(joined)]
    body = [joined[max(bounds[i], prefix) : min(bounds[i + 1], match.end())] for i in range(len(parts))]
    words = [w for piece in body for w in _SUBPIECE.split(piece) if len(w) >= 3]
    size = sum(map(len, words))
    wordlike = sum(len(w) for w in words if _WORDLIKE.fullmatch(w))
    if wordlike * 2 > size or not judge.mixed("".join(body)):
        return False  # words after a prefix: prose that mentions it
    last = max(i for i, (a, _) in enumerate(parts) if a < match.end())
    end = parts[last][1] + match.end() - parts[last][0]
    found.add(rule.kind, view.start(parts[0][1] - prefix), view.end(end), value)
    return True


# A base64 (or url-safe base64) run long enough to hold a credential, with the lines it wraps onto.
_BASE64 = re.compile(
    r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?:\r?\n[A-Za-z0-9+/_\-]{2,}={0,2})*(?![A-Za-z0-9+/_\-])"
)


# The widths base64 is wrapped at (PEM 64, `base64` 76, OpenSSH 70, others 60, 72, 80): a run's next
# line counts as its continuation only after a line of one of them, so that a short base64 token at the
# end of a line does not take the next line's first word with it.
_WRAP_WIDTHS = frozenset((60, 64, 70, 72, 76, 80))


def _wrapped_run(run: str) -> str:
    """The part of a base64 match that is one run: its first line, and the lines after it while the
    line before each is as wide as the first and that width is one base64 is wrapped at."""
    lines = run.splitlines(keepends=True)
    width = len(lines[0].rstrip("\r\n"))
    if width not in _WRAP_WIDTHS:
        return lines[0].rstrip("\r\n")
    kept = [lines[0]]
    for line in lines[1:]:
        if len(kept[-1].rstrip("\r\n")) != width:
            break
        kept.append(line)
    return "".join(kept).rstrip("\r\n")


def _match_encoded(view: View, found: _Found, depth: int) -> None:
    """Decode every long base64 run: a DER or OpenSSH private key is a finding, and text is scanned
    like any other (a base64 of base64 too, one level)."""
    for match in _BASE64.finditer(view.text):
        run = _wrapped_run(match.group())
        start, end = view.start(match.start()), view.end(match.start() + len(run))
        if found.covers(start, end):
            continue
        data = judge.decode(run)
        if data is None:
            continue
        if judge.private_key_bytes(data):
            found.add("private key (base64, without its BEGIN line)", start, end, run)
            continue
        decoded = data.decode("utf-8", errors="replace")
        if not judge.texty(decoded):
            continue
        inner = _scan(decoded, depth + 1)
        if inner:
            found.add(f"{inner[0].kind}, base64-encoded", start, end, run)


def _preview(value: str) -> str:
    keep = 4 if len(value) >= 16 else 2
    return value[:keep] + "…"
