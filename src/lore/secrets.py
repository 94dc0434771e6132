"""Likely credentials in text that is about to be stored. Pure: no database, no I/O.

Memory is shown to every agent session of a space, exported in plain text and kept in history, so a
write that holds a credential is refused (docs/design.md, Forget and purge: erasing one is
`lore purge`). A person who means to store such text passes `--allow-secret` to the CLI command; no
tool argument can do it.

What is detected, each shape narrow enough that ordinary prose and code do not match:

    cloud         AWS access key ids (AKIA/ASIA/...) and secret keys (after their key name), GCP
                  service-account JSON and Google API keys, Azure storage / Service Bus connection
                  strings (AccountKey=, SharedAccessKey=) and SAS signatures
    API tokens    GitHub (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), GitLab (glpat-), Slack (xox?- and
                  webhook URLs), OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-),
                  Stripe live keys (sk_live_, rk_live_), npm (npm_, _authToken=), PyPI (pypi-AgE...),
                  Hugging Face (hf_), SendGrid (SG.)
    key blocks    -----BEGIN ... PRIVATE KEY----- followed by key material
    passwords     URLs with a password (scheme://user:pass@host), key=value connection strings
                  (Password=...; with Server= or Host=), libpq strings (host=... password=...)
    JWTs          three base64url parts whose header decodes to JSON naming an `alg`
    assignments   a quoted, random-looking value (>= 24 chars, mixed classes, high entropy) given
                  to a name such as api_key, secret, token or password

Placeholders (`password`, `***`, `<token>`, `${VAR}`, `changeme`, ...) are never findings.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from lore.errors import Refused

# How a person stores each kind of item deliberately (the only way: a CLI flag).
DELIBERATE = {
    "fact": 'lore facts add "…" --allow-secret',
    "note": 'lore notes add "…" --allow-secret',
    "task": 'lore tasks file "TITLE" "BODY" --allow-secret',
    "message": 'lore messages send TO "…" --allow-secret',
    "markdown": "lore import-markdown DIR --allow-secret",
}


@dataclass(frozen=True)
class Finding:
    kind: str  # what it looks like, e.g. "GitHub token"
    start: int  # offsets of the credential itself in the scanned text
    end: int
    line: int  # 1-based
    preview: str  # the first few characters only, never the whole credential

    def describe(self) -> str:
        return f"{self.kind} {self.preview!r} on line {self.line}"


_PLACEHOLDER = re.compile(
    r"""^(?:\*+|x{3,}|X{3,}|\.{3}|…|<[^<>]*>|\[[^\[\]]*\]|\{\{?[^{}]*\}?\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?
        |%\([^)]*\)s|%s|password|passwd|pass|pw|pwd|secret|changeme|change_me|redacted|hunter2|example
        |your[-_]?(?:password|secret|token|key)|mypassword|mysecretpassword|dummy|test|none|null|empty)$""",
    re.IGNORECASE | re.VERBOSE,
)


def _placeholder(value: str) -> bool:
    value = value.strip("'\"`()[]{}.,")
    return not any(c.isalnum() for c in value) or bool(_PLACEHOLDER.match(value))


def _mixed(value: str) -> bool:
    """Letters and digits both present: real tokens are random, words and slugs are not."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _random_looking(value: str) -> bool:
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    return len(value) >= 24 and classes >= 2 and _mixed(value) and _entropy(value) >= 3.5


def _jwt(value: str) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int | str = 0  # the part of the match that is the credential
    accept: Callable[[str], bool] | None = None


def _rule(
    kind: str, pattern: str, group: int | str = 0, accept: Callable[[str], bool] | None = None, flags: int = 0
) -> _Rule:
    return _Rule(kind, re.compile(pattern, flags), group, accept)


_B = r"(?<![A-Za-z0-9_])"  # start of a token
_E = r"(?![A-Za-z0-9_])"  # end of a token

# Order matters where shapes overlap: the more specific rule claims the text first.
_RULES: tuple[_Rule, ...] = (
    _rule(
        "private key block",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,300}?[A-Za-z0-9+/=]{40,}",
    ),
    _rule(
        "GCP service-account key",
        r"\"type\"\s*:\s*\"service_account\"[^{}]{0,4000}?\"private_key(?:_id)?\"\s*:\s*\"[^\"]{16,}\"",
    ),
    _rule(
        "GCP service-account key",
        r"\"private_key(?:_id)?\"\s*:\s*\"[^\"]{16,}\"[^{}]{0,4000}?\"type\"\s*:\s*\"service_account\"",
    ),
    _rule("Google API key", _B + r"AIza[0-9A-Za-z_\-]{35}" + _E),
    _rule("AWS access key id", _B + r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}" + _E),
    _rule(
        "AWS secret access key",
        r"(?i:aws)?_?(?i:secret)_?(?i:access)?_?(?i:key)[\"']?\s*[:=]\s*[\"']?(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "v",
        _mixed,
    ),
    _rule(
        "Azure connection string",
        r"(?i:AccountKey|SharedAccessKey)\s*=\s*(?P<v>[A-Za-z0-9+/]{20,}={0,2})",
        "v",
        _mixed,
    ),
    _rule("Azure SAS signature", r"[?&]sv=\d{4}-\d{2}-\d{2}&[^\s\"']*?sig=(?P<v>[A-Za-z0-9%+/=]{20,})", "v"),
    _rule("GitHub token", _B + r"gh[pousr]_[A-Za-z0-9]{36,255}" + _E),
    _rule("GitHub token", _B + r"github_pat_[A-Za-z0-9_]{50,255}" + _E),
    _rule("GitLab token", _B + r"glpat-[A-Za-z0-9_\-]{20,}" + _E),
    _rule("Slack token", _B + r"xox[abposre]-(?:[0-9]+-)*[A-Za-z0-9\-]{10,}" + _E, accept=_mixed),
    _rule("Slack webhook URL", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"),
    _rule("Anthropic API key", _B + r"sk-ant-[a-z0-9]+-[A-Za-z0-9_\-]{32,}" + _E),
    _rule(
        "OpenAI API key",
        _B + r"sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}" + _E,
        accept=_mixed,
    ),
    _rule("Stripe live key", _B + r"(?:sk|rk)_live_[A-Za-z0-9]{16,}" + _E),
    _rule("npm token", _B + r"npm_[A-Za-z0-9]{36}" + _E),
    _rule("npm auth token", r"_authToken\s*=\s*(?P<v>[^\s\"'$]{16,})", "v", lambda v: not _placeholder(v)),
    _rule("PyPI token", _B + r"pypi-AgE[A-Za-z0-9_\-]{50,}" + _E),
    _rule("Hugging Face token", _B + r"hf_[A-Za-z0-9]{34,}" + _E, accept=_mixed),
    _rule("SendGrid API key", _B + r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + _E),
    _rule(
        "JSON Web Token",
        _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}" + _E,
        accept=_jwt,
    ),
    _rule(
        "password in a URL",
        r"(?i:[a-z][a-z0-9+.\-]{1,20})://[^\s:/@?#\"'<>]{1,128}:(?P<v>[^\s@/?#\"'<>]{4,256})@[A-Za-z0-9.\-_\[\]]+",
        "v",
        lambda v: not _placeholder(v),
    ),
    _rule(
        "password in a connection string",
        r"(?i:server|host|data source|hostname|address)\s*=[^;\n]{1,200};[^\n]{0,400}?"
        r"(?i:password|pwd)\s*=\s*(?P<v>[^;\s\"']{4,128})",
        "v",
        lambda v: not _placeholder(v),
    ),
    _rule(
        "password in a connection string",
        r"(?i:password|pwd)\s*=\s*(?P<v>[^;\s\"']{4,128})\s*;[^\n]{0,400}?"
        r"(?i:server|host|data source|hostname|address)\s*=",
        "v",
        lambda v: not _placeholder(v),
    ),
    _rule(
        "password in a connection string",
        r"(?i:host|hostname|dbname)=\S+(?:\s+\w+=\S+)*?\s+(?i:password)=(?P<v>[^\s'\"]{4,128})",
        "v",
        lambda v: not _placeholder(v),
    ),
    _rule(
        "secret assigned in code",
        r"(?i:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|password"
        r"|passwd|client[_\-]?secret|private[_\-]?key)[\"']?\s*(?::|=|:=|=>)\s*[\"'](?P<v>[A-Za-z0-9_\-+/=.]{24,256})[\"']",
        "v",
        lambda v: _random_looking(v) and not _placeholder(v),
    ),
)


def scan(text: str) -> list[Finding]:
    """Every likely credential in `text`, in order of position; overlapping matches count once."""
    found: list[Finding] = []
    taken: list[tuple[int, int]] = []
    for rule in _RULES:
        for match in rule.pattern.finditer(text):
            start, end = match.span(rule.group)
            value = match.group(rule.group)
            if rule.accept is not None and not rule.accept(value):
                continue
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            found.append(Finding(rule.kind, start, end, text.count("\n", 0, start) + 1, _preview(value)))
    return sorted(found, key=lambda f: f.start)


def _preview(value: str) -> str:
    keep = 4 if len(value) >= 16 else 2
    return value[:keep] + "…"


def contains_secret(text: str) -> bool:
    return bool(scan(text))


Field = tuple[str, "str | Sequence[str] | None"]


def findings(fields: Iterable[Field]) -> list[tuple[str, Finding]]:
    """(field name, finding) for each likely credential in the named fields."""
    out: list[tuple[str, Finding]] = []
    for name, value in fields:
        values = [value] if isinstance(value, str) else list(value or ())
        for item in values:
            out.extend((name, finding) for finding in scan(item))
    return out


def refuse(*fields: Field, what: str, allow: bool = False) -> None:
    """Raise Refused when a field holds a likely credential, unless a person allowed it (`allow`).

    `what` names the item ("fact", "note", "task", "message") so the hint shows the CLI command that
    stores it deliberately. The error shows the kind and the first characters only."""
    if allow:
        return
    hits = findings(fields)
    if not hits:
        return
    name, first = hits[0]
    more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
    raise Refused(
        f"Refused: the {what}'s {name} looks like it holds a credential: {first.describe()}{more}. "
        "lore does not store secrets: memory is shown to every agent session and exported as plain text.",
        "Leave the secret out and say where it lives instead (e.g. 'the deploy token is the CI secret "
        "DEPLOY_TOKEN')."
        + (
            f" If it is not a secret, a person can store it from a terminal: `{DELIBERATE[what]}`."
            if what in DELIBERATE
            else ""
        ),
    )
