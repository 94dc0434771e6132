"""Likely credentials in text that is about to be stored. Pure: no database, no I/O.

Memory is shown to every agent session of a space, exported in plain text and kept in history, so a
write that holds a credential is refused (docs/design.md, Forget and purge: erasing one is
`lore purge`). A person who means to store such text passes `--allow-secret` to the CLI command; no
tool argument can do it.

What is detected, each shape narrow enough that ordinary prose and code do not match:

    cloud         AWS access key ids (AKIA/ASIA/...) and secret keys (after their key name, or
                  alone: exactly 40 base64 characters with upper case, lower case and digits, entropy
                  4+, not hex, not words, not base64 of text, not the last line of a PEM body), GCP
                  service-account JSON and Google API keys, Azure storage / Service Bus connection
                  strings (AccountKey=, SharedAccessKey=) and SAS signatures
    lore          lore's own sign-in tokens (`lore_` and 43 url-safe base64 characters, as
                  `lore token create` and the local secret file make them)
    API tokens    GitHub (ghp_ gho_ ghu_ ghs_ ghr_ github_pat_), GitLab (glpat-), Slack (xox?- and
                  webhook URLs), OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-),
                  Stripe live keys (sk_live_, rk_live_), npm (npm_, _authToken=), PyPI (pypi-AgE...),
                  Hugging Face (hf_), SendGrid (SG.)
    key blocks    -----BEGIN ... PRIVATE KEY----- followed by key material
    passwords     URLs with a password (scheme://user:pass@host), key=value connection strings
                  (Password=...; with Server= or Host=), libpq strings (host=... password=...),
                  netrc entries (machine HOST login USER password ..., on one line or several) and
                  pgpass lines (host:port:database:user:password, the port digits or `*`)
    JWTs          three base64url parts whose header decodes to JSON naming an `alg`
    HTTP auth     an Authorization header's credentials (Bearer or token: 16+ characters, letters
                  and digits, not words; Basic: base64 of user:password), in a header line, a curl
                  -H argument or JSON, any case
    assignments   a quoted, random-looking value (>= 24 chars, mixed classes, high entropy) given
                  to a name such as api_key, secret, token or password; and, quoted or not, a value
                  that looks typed as a password (letters, digits and a symbol, 8+ varied chars) given
                  to password, passwd, pwd, passphrase, secret, token or api_key (`password=...`,
                  `DB_PASSWORD=...`, `password: ...` in YAML, `"password": "..."`)
    settings      a setting whose name holds PASS, PWD, SECRET, TOKEN, API_KEY, PRIVATE_KEY,
                  SIGNING_KEY, ENCRYPTION_KEY, ACCESS_KEY, MASTER_KEY, HMAC_KEY or AUTH at the start of
                  one of its parts (`DB_PASS`, `PGPASSWORD`, `SECRET_KEY`, `JWT_SIGNING_KEY`,
                  `export X=`, `X: ...`, `"x": "..."`) and no part after it that says it is something
                  else (`_URL`, `_ID`, `_HASH`, `_MIN_LENGTH`, ...), given a hex key (32+), a random
                  token (24+, not words) or a typed password (a symbol, letters and digits, 8+ with 6
                  different characters)

Placeholders (`password`, `***`, `<token>`, `${VAR}`, `changeme`, ...) and references (a variable, a
call, a path, a URL, `${{ secrets.X }}`) are never findings.

Text is read the way a person would read it, not only byte for byte (docs/reliability.md, Secrets):

    normalised    NFKC (full-width `ｇｈｐ＿`, mathematical bold, no-break spaces become ASCII) and
                  without invisible format characters (zero-width spaces and joiners, word joiners,
                  BOMs, soft hyphens, bidi controls) or combining marks and variation selectors
                  (categories Mn and Me: U+0301, U+20DD, U+FE0F, U+E0100...; precomposed letters such
                  as `é` stay); the token prefixes that allow it match in upper and lower case
                  (`GHP_`, a lower-cased `akia...`)
    spaced        a token with spaces, tabs or a line break inside (`ghp_abc… def…`, groups of four),
                  joined again when what follows the prefix looks random and not like words
    encoded       every base64 or url-safe base64 run of 24+ characters (lines wrapped at 64 or 76
                  joined) is decoded: text is scanned again (base64 inside base64 too), and the DER
                  of a private key or an OpenSSH private key is a finding by itself
    joined        `findings` reads the fields of one item together as well as alone, so a token split
                  between the title and the body, or over two tags, is found (`_across`)

Offsets and lines are always those of the text as given.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import itertools
import json
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from lore.core.errors import Refused

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
    spaced: _Spaced | None = None  # a token with a fixed prefix: also tried with spacing taken out
    check: Callable[[re.Match[str]], bool] | None = None  # a judgement that needs the whole match
    gate: re.Pattern[str] | None = None  # what a text needs for the rule to run (beyond its _HINTS)


@dataclass(frozen=True)
class _Spaced:
    """How a token rule is tried on a token with spacing inside it (`_match_spaced`): every form of
    its prefix, the characters its body is made of, and the length of the shortest body."""

    forms: tuple[str, ...]
    alphabet: re.Pattern[str]
    shortest: int


def _rule(
    kind: str,
    pattern: str,
    group: int | str = 0,
    accept: Callable[[str], bool] | None = None,
    flags: int = 0,
    check: Callable[[re.Match[str]], bool] | None = None,
    gate: str | None = None,
) -> _Rule:
    return _Rule(
        kind,
        re.compile(pattern, flags),
        group,
        accept,
        check=check,
        gate=None if gate is None else re.compile(gate),
    )


def _aws_key_id(value: str) -> bool:
    """AKIA... as issued (upper case), or the whole id lower-cased (with a digit in it, as random ids
    have), never a mix: `Akiapolaau...` is a word."""
    return value.isupper() or (value.islower() and _mixed(value[4:]))


def _reference(value: str) -> bool:
    """A value that says where the secret comes from instead of holding it (a variable or template, a
    call or an index, a path, a file, a URL or an ARN), or that is cut short or marked as an example."""
    return (
        value[0] in "$%{<@`([&*~/.:\\"
        or any(mark in value for mark in ("{", "}", "://", "...", "…", "EXAMPLE", "example"))
        or value[:4].lower() in ("arn:", "urn:")
        or bool(_CALL.match(value) or _FILE.fullmatch(value))
    )


_CALL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\s*[(\[]")
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[,;:)\]]*")  # a variable, an attribute, a type
_FILE = re.compile(r"[\w.\-/]+\.(?:txt|json|pem|key|env|ya?ml|toml|cfg|conf|ini|crt|p12)", re.IGNORECASE)


def _password_like(value: str) -> bool:
    """A random token, or what a person types as a password: letters, digits and a symbol in at least
    8 varied characters. Never a placeholder, a reference or a name (a variable, an attribute, a type)."""
    if _placeholder(value) or _reference(value):
        return False
    if _random_looking(value):
        return True
    return _typed_password(value)


def _typed_password(value: str, *, loose: bool = False) -> bool:
    """Letters, digits and a symbol in at least 8 varied characters, and not a name. `loose`, for a
    value given to a name that says it is a secret, counts 6 different characters and 3 letters as
    varied (`s3cr3tP4ss!`, `t3st3rPass#`; not a version such as `1.0.0-rc1`)."""
    if _NAME.fullmatch(value):
        return False
    symbol = any(not c.isalnum() for c in value)
    if loose:
        varied = len(set(value)) >= 6 and sum(c.isalpha() for c in value) >= 3
    else:
        varied = _entropy(value) >= min(3.0, math.log2(len(value)) - 0.5)
    return symbol and _mixed(value) and len(value) >= 8 and varied


_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_VOWELS = frozenset("aeiouy")


def _word(piece: str) -> bool:
    """Reads like a word: a vowel in every four letters, never three vowels in a row (`deploy`,
    `facts`; not `qzxv` or `aeio`). Random letters pass now and then, so it counts only with `_wordy`."""
    low = piece.lower()
    return all(_VOWELS & set(low[i : i + 4]) for i in range(len(low) - 3)) and not any(
        set(low[i : i + 3]) <= _VOWELS for i in range(len(low) - 2)
    )


def _kind_of(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2


def _wordy(value: str) -> bool:
    """An identifier or words run together (`lore_session_start_hook...`, `ThisIsALongName12`,
    `X-Amz-Session-Token`), not a random token: words of 4+ letters make up more than half of it, and
    its letters and digits change between lower case, upper case and digits at fewer than 45 % of
    them (random ones change at about 60 %). About 1 in 5,000 random 40-character tokens reads so, 1
    in 200 of 16 characters."""
    words = sum(len(w) for w in _WORD.findall(value) if _word(w))
    if words * 2 <= len(value):
        return False
    plain = [c for c in value if c.isalnum()]
    changes = sum(_kind_of(a) != _kind_of(b) for a, b in itertools.pairwise(plain))
    return changes < 0.45 * (len(plain) - 1)


_HEX = re.compile(r"[0-9a-fA-F]+")
_SLUG = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+")


def _secret_value(value: str) -> bool:
    """What a named setting holds when it holds a secret: a key in hex (32+ digits), a random token
    (24+ characters, not words) or a typed password. Never a placeholder, a reference, a dotted or
    word-like name, words joined by dashes, or code (`True)[0]`, `a.Emitter=a.Event`)."""
    if _placeholder(value) or _reference(value) or any(c in value for c in "()[]"):
        return False
    chain = value.rstrip("=").split("=")
    if len(chain) > 1 and all(_NAME.fullmatch(part) for part in chain):
        return False  # assignments chained in minified code
    if _HEX.fullmatch(value):
        return len(value) >= 32 and _mixed(value)
    if _NAME.fullmatch(value) and ("." in value or _wordy(value)):
        return False
    if _random_looking(value) and not _wordy(value):
        return True
    if _SLUG.fullmatch(value) and _wordy(value):
        return False  # words joined by dashes, dots or underscores: a header name, a slug, a version
    return _typed_password(value, loose=True)


def _lore_token(value: str) -> bool:
    """lore's own sign-in token (`lore_` and 32 random bytes in url-safe base64): both cases, varied,
    not words (`lore_` and a long snake_case name is an identifier)."""
    body = value[5:]
    cased = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return cased and _entropy(body) >= 4.0 and not _wordy(body)


# The parts of a setting's name after its secret word that say it holds something else: a digest, an
# id, a location, a limit, a kind of thing (`TOKEN_HASH`, `API_KEY_ID`, `PASSWORD_MIN_LENGTH`, ...).
_NOT_SECRET_WORDS = """hash hashed hashes sha sha1 sha256 sha512 md5 digest fingerprint checksum id ids
    name names url uri urls endpoint host port file files path paths dir length len min max count size
    type types ttl timeout expiry expires expiration expire header prefix suffix field env var hint
    policy scope scopes backend backends provider store engine class module method methods algorithm
    alg mode format version enabled required label validator validators hasher hashers public pub salt
    rounds iterations cost query param params parameter parameters"""
_NOT_SECRET_PARTS = frozenset(_NOT_SECRET_WORDS.split())
_STRONG_WORDS = "key keys token tokens secret secrets pass password passwd pwd"
_STRONG_PARTS = frozenset(_STRONG_WORDS.split())
_NAME_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


def _secret_name(match: re.Match[str]) -> bool:
    """The name in a `NAME=value` match names a secret: its secret word (`PASS`, `SECRET`, `TOKEN`,
    `SIGNING_KEY`, ...) starts a part of it (`DB_PASS`, `PGPASSWORD`, `dbPassword`; not `bypass`,
    `compass`), `auth` is alone or with a secret word (`AUTH_TOKEN`; not `AUTH_BACKEND`), and no later
    part says it is something else (`TOKEN_URL`, `API_KEY_ID`). Not after `:` or `/` (a URL)."""
    text, start = match.string, match.start()
    first = start
    while first > 0 and start - first < 64 and (text[first - 1].isalnum() or text[first - 1] in "_.-"):
        first -= 1
    if first and text[first - 1] in ":/":
        return False
    lead = text[first:start]
    word = match.group("word").lower()
    if word in ("pass", "pwd", "auth") and lead[-1:].isalpha() and not lead.isupper():
        return False
    rest = {part.lower() for part in _NAME_PART.findall(match.group("rest"))}
    if rest & _NOT_SECRET_PARTS:
        return False
    return word != "auth" or not rest or bool(rest & _STRONG_PARTS)


def _auth_header(match: re.Match[str]) -> bool:
    """`Authorization: Bearer <token>` with a token (16+ characters, letters and digits, not words) or
    `Basic <base64 of user:password>`; never a placeholder, a reference or a value cut short."""
    value = match.group("v")
    after = match.string[match.end("v") : match.end("v") + 1]
    if after in ("…", "$", "{", "<", "*") or _placeholder(value) or _reference(value):
        return False
    if match.group("scheme").lower() == "basic":
        data = _decode(value)
        decoded = data.decode("utf-8", errors="replace") if data is not None else ""
        user, colon, password = decoded.partition(":")
        printable = decoded.isprintable() and "\ufffd" not in decoded
        return printable and bool(user and colon) and len(password) >= 4 and not _placeholder(password)
    return len(value) >= 16 and _mixed(value) and _entropy(value) >= 3.0 and not _wordy(value)


def _login_password(value: str) -> bool:
    """A password where a netrc entry or a pgpass line puts it: 6+ characters with a digit or a
    symbol, not a placeholder, a reference or a NAME_IN_CAPITALS (`PASSWORD`, `API_TOKEN`)."""
    if len(value) < 6 or _placeholder(value) or _reference(value) or re.fullmatch(r"[A-Z_]+", value):
        return False
    return _mixed(value) or any(not c.isalnum() for c in value)


def _netrc(match: re.Match[str]) -> bool:
    after = match.string[match.end() : match.end() + 7]
    login = "login" in match.group("pairs") or re.match(r"\s+login\s", after + " ") is not None
    return login and _login_password(match.group("v"))


_HOST = re.compile(r"\*|[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*")


def _pgpass(match: re.Match[str]) -> bool:
    """hostname:port:database:username:password. The pattern starts at the colon before the port (a
    literal the regex engine searches for quickly); the host is read back from there: a name (with a
    letter or a dot) or `*`, at the start of a token. Not five hex groups (an IPv6 address or a MAC)."""
    text, start = match.string, match.start()
    first = start
    while first > 0 and start - first < 253 and (text[first - 1].isalnum() or text[first - 1] in "_.-*"):
        first -= 1
    host = text[first:start]
    boundary = first == 0 or text[first - 1].isspace() or text[first - 1] in "\"'`(["
    if not boundary or not _HOST.fullmatch(host):
        return False
    if host != "*" and not any(c.isalpha() or c == "." for c in host):
        return False  # a time, a run of numbers
    if all(_HEX.fullmatch(field) for field in [host, *match.group()[1:].split(":")]):
        return False
    return _login_password(match.group("v"))


_WRAPPED = re.compile(r"[A-Za-z0-9+/=]{48,}")


def _aws_secret_alone(match: re.Match[str]) -> bool:
    """40 characters of base64's alphabet with upper case, lower case and digits, not hex, varied
    (entropy 4+: 40 random characters are at least 4.1), not words, not base64 of text, and not the
    last line of a wrapped base64 block (a PEM certificate's)."""
    value = match.group()
    cased = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if not (cased and _mixed(value)) or _HEX.fullmatch(value) or "EXAMPLE" in value:
        return False
    if _entropy(value) < 4.0 or _wordy(value):
        return False
    data = _decode(value)
    if data is not None and _texty(data.decode("utf-8", errors="replace")):
        return False
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    previous = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : max(line_start - 1, 0)].strip()
    line_end = text.find("\n", match.end())
    following = "" if line_end < 0 else text[line_end + 1 : line_end + 200].split("\n", 1)[0].strip()
    wrapped = _WRAPPED.fullmatch(previous) or _WRAPPED.fullmatch(following)
    return not wrapped and not following.startswith("-----END")


_B = r"(?<![A-Za-z0-9_])"  # start of a token
_E = r"(?![A-Za-z0-9_])"  # end of a token


def _token(prefixes: Sequence[str], body: str, *, fold: bool = True) -> str:
    """A token: one of `prefixes` (as written, and, with `fold`, in lower and upper case), not preceded
    by a token character, then `body`. The prefix comes first in the pattern (the start-of-token test
    looks behind from its end) so that the regex engine searches for its letters: four times faster
    than testing the start at every position of a long text."""
    widths = {len(p) for p in prefixes}
    assert len(widths) == 1, prefixes
    forms = _forms(prefixes, fold)
    return "(?:" + "|".join(map(re.escape, forms)) + f")(?<![A-Za-z0-9_].{{{widths.pop()}}})" + body + _E


def _forms(prefixes: Sequence[str], fold: bool) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for p in prefixes for f in ((p, p.lower(), p.upper()) if fold else (p,))))


def _token_rule(
    kind: str,
    prefixes: Sequence[str],
    body: str,
    *,
    alphabet: str,
    shortest: int,
    fold: bool = True,
    accept: Callable[[str], bool] | None = None,
) -> _Rule:
    """A `_token` rule that is also tried with the spacing inside a token taken out."""
    spaced = _Spaced(_forms(prefixes, fold), re.compile(f"[{alphabet}]+"), shortest)
    return _Rule(kind, re.compile(_token(prefixes, body, fold=fold)), 0, accept, spaced)


_ALNUM = "A-Za-z0-9"
_ID = r"A-Za-z0-9_\-"

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
    _token_rule("Google API key", ["AIza"], r"[0-9A-Za-z_\-]{35}", alphabet=_ID, shortest=35, fold=False),
    _token_rule(
        "AWS access key id",
        ["AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "ANPA"],
        r"[A-Za-z0-9]{16}",
        alphabet=_ALNUM,
        shortest=16,
        accept=_aws_key_id,
    ),
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
    _token_rule(
        "GitHub token",
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"[A-Za-z0-9]{36,255}",
        alphabet=_ALNUM,
        shortest=36,
    ),
    _token_rule("GitHub token", ["github_pat_"], r"[A-Za-z0-9_]{50,255}", alphabet=_ALNUM + "_", shortest=50),
    _token_rule("GitLab token", ["glpat-"], r"[A-Za-z0-9_\-]{20,}", alphabet=_ID, shortest=20),
    _token_rule(
        "lore token", ["lore_"], r"[A-Za-z0-9_\-]{43}(?!-)", alphabet=_ID, shortest=43, accept=_lore_token
    ),
    _token_rule(
        "Slack token",
        [f"xox{c}-" for c in "abposre"],
        r"(?:[0-9]+-)*[A-Za-z0-9\-]{10,}",
        alphabet=_ALNUM + r"\-",
        shortest=10,
        accept=_mixed,
    ),
    _rule("Slack webhook URL", r"https://hooks\.slack\.com/services/T[A-Z0-9]+/B[A-Z0-9]+/[A-Za-z0-9]{16,}"),
    _token_rule(
        "Anthropic API key", ["sk-ant-"], r"[a-z0-9]+-[A-Za-z0-9_\-]{32,}", alphabet=_ID, shortest=34
    ),
    _token_rule(
        "OpenAI API key",
        ["sk-"],
        r"(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{32,}",
        alphabet=_ID,
        shortest=32,
        fold=False,
        accept=_mixed,
    ),
    _token_rule(
        "Stripe live key", ["sk_live_", "rk_live_"], r"[A-Za-z0-9]{16,}", alphabet=_ALNUM, shortest=16
    ),
    _token_rule("npm token", ["npm_"], r"[A-Za-z0-9]{36}", alphabet=_ALNUM, shortest=36),
    _rule("npm auth token", r"_authToken\s*=\s*(?P<v>[^\s\"'$]{16,})", "v", lambda v: not _placeholder(v)),
    _token_rule("PyPI token", ["pypi-"], r"AgE[A-Za-z0-9_\-]{50,}", alphabet=_ID, shortest=53),
    _token_rule(
        "Hugging Face token", ["hf_"], r"[A-Za-z0-9]{34,}", alphabet=_ALNUM, shortest=34, accept=_mixed
    ),
    _token_rule(
        "SendGrid API key",
        ["SG."],
        r"[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        alphabet=_ID + ".",
        shortest=66,
        fold=False,
    ),
    _rule(
        "JSON Web Token",
        _token(["eyJ"], r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}", fold=False),
        accept=_jwt,
    ),
    _rule(
        "HTTP Authorization header",
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:(?P<scheme>bearer|basic|token))[ \t]+"
        r"(?P<v>[A-Za-z0-9._~+/\-]{8,}=*)",
        "v",
        check=_auth_header,
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
        "password in a netrc entry",
        r"(?:(?P<m>machine)|default)(?<![A-Za-z0-9_].{7})(?(m)\s+\S+)"
        r"(?P<pairs>(?:\s+(?:login|account|port)\s+\S+){0,3})\s+password\s+(?P<v>\S+)",
        "v",
        check=_netrc,
    ),
    _rule(
        "password in a pgpass line",
        r":(?:\d{1,5}|\*)(?::(?:[^\s:\\\"'`]|\\.)+){2}:(?P<v>(?:[^\s:\\\"'`]|\\.)+)(?![^\s\"'`)\]])",
        "v",
        check=_pgpass,
    ),
    _rule(
        "secret assigned in code",
        r"(?i:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|password"
        r"|passwd|client[_\-]?secret|private[_\-]?key)[\"']?\s*(?::|=|:=|=>)\s*[\"'](?P<v>[A-Za-z0-9_\-+/=.]{24,256})[\"']",
        "v",
        lambda v: _random_looking(v) and not _placeholder(v),
    ),
    _rule(
        "password assigned",
        r"(?<![:/])(?i:password|passwd|pwd|passphrase|secret|token|api[_\-]?key)[\"']?"
        r"[ \t]*(?::|=|:=|=>)[ \t]*[\"'`]?(?P<v>[^\s\"'`<>;,]{8,128})",
        "v",
        _password_like,
    ),
    _rule(
        "secret in a named setting",
        r"(?=[AaEeHhMmPpSsTt])(?i:(?P<word>pass(?:words?|wd|phrase)?|pwd|secrets?|tokens?|api[_\-]?keys?"
        r"|apikeys?|(?:private|signing|encryption|access|master|hmac|auth)[_\-]?keys?|auth))"
        r"(?P<rest>(?:(?:[_.\-]|(?<=[a-z])(?=[A-Z]))[A-Za-z0-9]+){0,4})"
        r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*[\"'`]?(?P<v>[^\s\"'`<>;,]{8,256})",
        "v",
        _secret_value,
        check=_secret_name,
        # A name's words are everywhere in prose; an assignment of 8+ characters is not, and its regex
        # is 10 times faster than the rule's (which tries its words at every a, e, h, m, p, s and t).
        gate=r"(?:=|:)[ \t]*[\"'`]?[^\s\"'`<>;,]{8}",
    ),
    _rule(
        "AWS secret access key, unlabelled",
        r"(?<![A-Za-z0-9/+=_\-.:~%@])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])",
        check=_aws_secret_alone,
    ),
)
_TOKEN_RULES = tuple(rule for rule in _RULES if rule.spaced is not None)

# Each kind's matches contain one of these (lower-cased): a text without any skips its rules, which
# keeps a scan of ordinary prose to a few substring searches for most kinds. () runs the rule always.
_HINTS: dict[str, tuple[str, ...]] = {
    "private key block": ("private key",),
    "GCP service-account key": ("service_account",),
    "Google API key": ("aiza",),
    "AWS access key id": ("akia", "asia", "abia", "acca", "agpa", "aida", "aroa", "anpa"),
    "AWS secret access key": ("secret",),
    "Azure connection string": ("accountkey", "sharedaccesskey"),
    "Azure SAS signature": ("sig=",),
    "GitHub token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "GitLab token": ("glpat-",),
    "lore token": ("lore_",),
    "Slack token": ("xox",),
    "Slack webhook URL": ("hooks.slack.com",),
    "Anthropic API key": ("sk-ant-",),
    "OpenAI API key": ("sk-",),
    "Stripe live key": ("_live_",),
    "npm token": ("npm_",),
    "npm auth token": ("_authtoken",),
    "PyPI token": ("pypi-",),
    "Hugging Face token": ("hf_",),
    "SendGrid API key": ("sg.",),
    "JSON Web Token": ("eyj",),
    "HTTP Authorization header": ("authorization",),
    "password in a netrc entry": ("password",),
    "password in a pgpass line": (":",),
    "password in a URL": ("://",),
    "password in a connection string": ("passw", "pwd"),
    "secret assigned in code": ("api", "secret", "token", "passw", "private"),
    "password assigned": ("passw", "pwd", "passphrase", "secret", "token", "api"),
    "secret in a named setting": (
        *("pass", "pwd", "secret", "token", "api", "private", "signing", "encryption", "access"),
        *("master", "hmac", "auth"),
    ),
    # No word to look for: 40 characters of base64 standing alone. The pattern only gets past its
    # first character at the start of a run of them, so ordinary prose costs one pass of the regex.
    "AWS secret access key, unlabelled": (),
}
_TOKEN_HINTS = tuple({hint for rule in _TOKEN_RULES for hint in _HINTS[rule.kind]})


def scan(text: str) -> list[Finding]:
    """Every likely credential in `text`, in order of position; overlapping matches count once.

    The rules run on the text as it is, then on a normalised copy when that differs (NFKC, which
    folds full-width and other compatibility forms to ASCII, with invisible format characters such
    as zero-width spaces removed), then once more from each token prefix with the spacing inside the
    token taken out, and on what every long base64 run decodes to. Offsets are always in `text`."""
    return _scan(text, 0)


def _scan(text: str, depth: int) -> list[Finding]:
    found = _Found(text)
    plain = _View(text, [])
    _match_rules(plain, found)
    view = _normalised(text)
    if view is not None:
        _match_rules(view, found)
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


@dataclass(frozen=True)
class _View:
    """A copy of the scanned text, and where its changed runs came from: (copy start, copy end,
    original start, original end) of each, in order. Offsets outside the runs shift by a constant."""

    text: str
    runs: list[tuple[int, int, int, int]]

    def _run(self, i: int) -> tuple[int, int, int, int] | None:
        k = bisect.bisect_right(self.runs, (i, math.inf)) - 1
        return self.runs[k] if k >= 0 else None

    def start(self, i: int) -> int:
        run = self._run(i)
        if run is None:
            return i
        _, end, o_start, o_end = run
        return o_start if i < end else i - end + o_end

    def end(self, i: int) -> int:
        run = self._run(i - 1)
        if run is None:
            return i
        _, end, _, o_end = run
        return o_end if i <= end else i - end + o_end


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
# Unicode's format characters (category Cf, as of Unicode 14, Python 3.11's): invisible, and never part
# of a credential. tests/reliability/test_secrets.py checks the list against `unicodedata`.
FORMAT_CHARACTERS = (
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)


class _Invisible(dict[int, int | None]):
    """str.translate's table of what the normalised copy drops: the format characters above, and
    combining and enclosing marks (categories Mn and Me, variation selectors U+FE00-U+FE0F and
    U+E0100-U+E01EF among them), which a token never holds and which would otherwise stop a match
    (`ghp_abc\u0301def...`). Marks are found as they are met: a character's category is asked once,
    and at most _REMEMBERED characters are kept (a text of every code point cannot grow it without end)."""

    def __missing__(self, code: int) -> int | None:
        kept = None if unicodedata.category(chr(code)) in ("Mn", "Me") else code
        if len(self) < _REMEMBERED:
            self[code] = kept
        return kept


_REMEMBERED = 65_536


_DROP_INVISIBLE = _Invisible({c: None for low, high in FORMAT_CHARACTERS for c in range(low, high + 1)})
_MAX_DEPTH = 2  # base64 inside base64, and no deeper


def _normalised(text: str) -> _View | None:
    """NFKC of every non-ASCII run, without format characters (Cf: zero-width spaces and joiners,
    word joiners, BOMs, soft hyphens, bidi controls) or combining marks and variation selectors (Mn,
    Me), which are dropped first so that NFKC does not compose them into the letter before (`g` and
    U+0301 would become `ǵ`); None when that changes nothing. Precomposed letters (`é`) stay."""
    if text.isascii():
        return None
    pieces: list[str] = []
    runs: list[tuple[int, int, int, int]] = []
    last = size = 0
    for match in _NON_ASCII.finditer(text):
        start, end = match.span()
        pieces.append(text[last:start])
        size += start - last
        visible = match.group().translate(_DROP_INVISIBLE)
        folded = unicodedata.normalize("NFKC", visible)
        if folded != visible:
            folded = folded.translate(_DROP_INVISIBLE)  # a compatibility form that NFKC decomposes
        if folded != match.group():
            runs.append((size, size + len(folded), start, end))
        pieces.append(folded)
        size += len(folded)
        last = end
    if not runs:
        return None
    pieces.append(text[last:])
    return _View("".join(pieces), runs)


def _match_rules(view: _View, found: _Found) -> None:
    lowered = view.text.lower()
    for rule in _RULES:
        hints = _HINTS[rule.kind]
        if hints and not any(hint in lowered for hint in hints):
            continue
        if rule.gate is not None and rule.gate.search(view.text) is None:
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
_FORMS = sorted({f for rule in _TOKEN_RULES if rule.spaced for f in rule.spaced.forms}, key=len, reverse=True)
_PREFIX = re.compile("|".join(map(re.escape, _FORMS)))
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_]")


def _by_form() -> dict[str, list[tuple[_Rule, _Spaced, int]]]:
    """Each prefix form -> the token rules that a text starting with it can match (a text starting
    with `sk-ant-` starts with `sk-` too), with the width of that rule's prefix."""
    table: dict[str, list[tuple[_Rule, _Spaced, int]]] = {}
    for form in _FORMS:
        for rule in _TOKEN_RULES:
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


def _match_spaced(view: _View, found: _Found) -> None:
    """A token with spacing inside (a space or tab, a line break, groups of four): from each prefix,
    join the pieces that follow (made of the token's characters) until the token rule matches across
    a gap. What follows the prefix must look random (a digit and a letter, mostly not words), so prose
    after `ghp_` never joins up. Pieces are read only as far as a rule needs them (at most 48, and
    never past another prefix), so a text of nothing but prefixes stays linear."""
    text = view.text
    lowered = text.lower()
    if not any(hint in lowered for hint in _TOKEN_HINTS):
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
    view: _View, found: _Found, rule: _Rule, spaced: _Spaced, pieces: Iterable[tuple[int, int]], prefix: int
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
    view: _View,
    found: _Found,
    rule: _Rule,
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
    if wordlike * 2 > size or not _mixed("".join(body)):
        return False  # words after a prefix: prose that mentions it
    last = max(i for i, (a, _) in enumerate(parts) if a < match.end())
    end = parts[last][1] + match.end() - parts[last][0]
    found.add(rule.kind, view.start(parts[0][1] - prefix), view.end(end), value)
    return True


# A base64 (or url-safe base64) run long enough to hold a credential, with the lines it wraps onto.
_BASE64 = re.compile(
    r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{24,}={0,2}(?:\r?\n[A-Za-z0-9+/_\-]{2,}={0,2})*(?![A-Za-z0-9+/_\-])"
)
_URLSAFE = str.maketrans("-_", "+/")


def _match_encoded(view: _View, found: _Found, depth: int) -> None:
    """Decode every long base64 run: a DER or OpenSSH private key is a finding, and text is scanned
    like any other (a base64 of base64 too, one level)."""
    for match in _BASE64.finditer(view.text):
        start, end = view.start(match.start()), view.end(match.end())
        if found.covers(start, end):
            continue
        data = _decode(match.group())
        if data is None:
            continue
        if _private_key_bytes(data):
            found.add("private key (base64, without its BEGIN line)", start, end, match.group())
            continue
        decoded = data.decode("utf-8", errors="replace")
        if not _texty(decoded):
            continue
        inner = _scan(decoded, depth + 1)
        if inner:
            found.add(f"{inner[0].kind}, base64-encoded", start, end, match.group())


def _decode(run: str) -> bytes | None:
    raw = "".join(run.split()).rstrip("=")
    if "-" in raw or "_" in raw:
        if "+" in raw or "/" in raw:
            return None  # two alphabets: not base64
        raw = raw.translate(_URLSAFE)
    if len(raw) % 4 == 1:
        raw = raw[:-1]
    try:
        return binascii.a2b_base64(raw + "=" * (-len(raw) % 4))
    except binascii.Error:
        return None


def _texty(decoded: str) -> bool:
    """Mostly printable text (random bytes, images and archives are not)."""
    if len(decoded) < 12:
        return False
    good = sum(1 for c in decoded if (c.isprintable() and c != "\ufffd") or c in "\n\r\t")
    return good >= 0.9 * len(decoded)


def _private_key_bytes(data: bytes) -> bool:
    """The DER of a private key (PKCS#1 RSA, PKCS#8, SEC1 EC, PKCS#12: a SEQUENCE whose first member
    is a version INTEGER) or an OpenSSH private key. Public keys and certificates start otherwise."""
    if data.startswith(b"openssh-key-v1\x00"):
        return True
    if len(data) < 16 or data[0] != 0x30:
        return False
    at = 2
    if data[1] & 0x80:
        width = data[1] & 0x7F
        if width not in (1, 2, 3):
            return False
        at = 2 + width
    version = data[at : at + 3]
    after = data[at + 3 : at + 4]
    return (version == b"\x02\x01\x00" and after in (b"\x02", b"\x30")) or (
        version in (b"\x02\x01\x01", b"\x02\x01\x03") and after in (b"\x04", b"\x30")
    )


def _preview(value: str) -> str:
    keep = 4 if len(value) >= 16 else 2
    return value[:keep] + "…"


def contains_secret(text: str) -> bool:
    return bool(scan(text))


Field = tuple[str, "str | Sequence[str] | None"]


def findings(fields: Iterable[Field]) -> list[tuple[str, Finding]]:
    """(field name, finding) for each likely credential in the named fields: each field alone, and
    the fields read together (a token split between the title and the body, or over two tags)."""
    out: list[tuple[str, Finding]] = []
    parts: list[tuple[str, str]] = []
    for name, value in fields:
        values = [value] if isinstance(value, str) else list(value or ())
        for item in values:
            parts.append((name, item))
            out.extend((name, finding) for finding in scan(item))
    out.extend(_across(parts))
    return out


_REACH = 600  # characters on each side of a boundary between two fields that the joined scan reads


def _across(parts: Sequence[tuple[str, str]]) -> list[tuple[str, Finding]]:
    """Findings that only appear when the fields are read together, joined by line breaks: between
    the items of one field (a token over two tags), and between two fields in either order (the write
    paths pass the body before the title; a person reads the title first). Only the text within
    _REACH of a boundary is read again, so a 32 KiB body is not scanned twice."""
    fields: dict[str, list[str]] = {}
    for name, text in parts:
        fields.setdefault(name, []).append(text)
    out: list[tuple[str, Finding]] = []
    for name, items in fields.items():
        if len(items) > 1:
            out.extend((name, hit) for hit in _crossing([(item, item, 0) for item in items]))
    joined = {name: "\n".join(items) for name, items in fields.items()}
    for a, b in itertools.permutations(joined, 2):
        tail = joined[a][-_REACH:]
        pieces = [(joined[a], tail, len(joined[a]) - len(tail)), (joined[b], joined[b][:_REACH], 0)]
        out.extend((f"{a} and {b}", hit) for hit in _crossing(pieces))
    return out


def _crossing(pieces: Sequence[tuple[str, str, int]]) -> list[Finding]:
    """Findings of the pieces joined by line breaks that cross a boundary between two of them. Each
    piece is (its whole field, the part of it read here, where that part starts in the field); a
    finding's line is in the field where it starts. Windows of _REACH around each boundary, merged."""
    joined = "\n".join(part for _, part, _ in pieces)
    starts, at = [], 0
    for _, part, _ in pieces:
        starts.append(at)
        at += len(part) + 1
    cuts = [start - 1 for start in starts[1:]]  # where each joining line break is
    windows: list[tuple[int, int]] = []
    for cut in cuts:
        low, high = max(0, cut - _REACH), cut + 1 + _REACH
        if windows and low <= windows[-1][1]:
            windows[-1] = (windows[-1][0], high)
        else:
            windows.append((low, high))
    out: list[Finding] = []
    for low, high in windows:
        for hit in scan(joined[low:high]):
            start, end = hit.start + low, hit.end + low
            if any(start < cut < end - 1 for cut in cuts):
                k = bisect.bisect_right(starts, start) - 1
                whole, _, offset = pieces[k]
                line = whole.count("\n", 0, offset + start - starts[k]) + 1
                out.append(Finding(hit.kind, start, end, line, hit.preview))
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
