"""How a candidate is judged once a rule's pattern matched it: placeholders and references are never
credentials, random tokens and typed passwords are, words and names are not. Pure functions of the
value (or of the whole match, where the judgement needs what surrounds it); lore.core.secrets.rules
names which rule uses which."""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import math
import re

_PLACEHOLDER = re.compile(
    r"""^(?:\*+|x{3,}|X{3,}|\.{3}|…|<[^<>]*>|\[[^\[\]]*\]|\{\{?[^{}]*\}?\}|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?
        |%\([^)]*\)s|%s|password|passwd|pass|pw|pwd|secret|changeme|change_me|redacted:?|hunter2|example
        |your[-_]?(?:password|secret|token|key)|mypassword|mysecretpassword|dummy|test|none|null|empty)$""",
    re.IGNORECASE | re.VERBOSE,
)


def placeholder(value: str) -> bool:
    value = value.strip("'\"`()[]{}.,;:")
    return not any(c.isalnum() for c in value) or bool(_PLACEHOLDER.match(value))


def mixed(value: str) -> bool:
    """Letters and digits both present: real tokens are random, words and slugs are not."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    n = len(value)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def random_looking(value: str) -> bool:
    classes = sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
        )
    )
    return len(value) >= 24 and classes >= 2 and mixed(value) and entropy(value) >= 3.5


def jwt(value: str) -> bool:
    head = value.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


def aws_key_id(value: str) -> bool:
    """AKIA... as issued (upper case), or the whole id lower-cased (with a digit in it, as random ids
    have), never a mix: `Akiapolaau...` is a word."""
    return value.isupper() or (value.islower() and mixed(value[4:]))


def reference(value: str) -> bool:
    """A value that says where the secret comes from instead of holding it (a variable or template, a
    call or an index, a path, a file, a URL or an ARN), or that is cut short or marked as an example."""
    return (
        value[0] in "$%{<@`([&*~/.:\\"
        or any(mark in value for mark in ("{", "}", "://", "...", "…", "EXAMPLE", "example"))
        or value[:4].lower() in ("arn:", "urn:")
        or bool(_CALL.match(value) or _FILE.fullmatch(value))
    )


_CALL = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\s*[(\[]")
NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*[,;:)\]]*")  # a variable, an attribute, a type
_FILE = re.compile(r"[\w.\-/]+\.(?:txt|json|pem|key|env|ya?ml|toml|cfg|conf|ini|crt|p12)", re.IGNORECASE)


def password_like(value: str) -> bool:
    """A random token, or what a person types as a password: letters, digits and a symbol in at least
    8 varied characters. Never a placeholder, a reference or a name (a variable, an attribute, a type)."""
    if placeholder(value) or reference(value):
        return False
    if random_looking(value):
        return True
    return typed_password(value)


def typed_password(value: str, *, loose: bool = False) -> bool:
    """Letters, digits and a symbol in at least 8 varied characters, and not a name. `loose`, for a
    value given to a name that says it is a secret, counts 6 different characters and 3 letters as
    varied (`s3cr3tP4ss!`, `t3st3rPass#`; not a version such as `1.0.0-rc1`)."""
    if NAME.fullmatch(value):
        return False
    symbol = any(not c.isalnum() for c in value)
    if loose:
        varied = len(set(value)) >= 6 and sum(c.isalpha() for c in value) >= 3
    else:
        varied = entropy(value) >= min(3.0, math.log2(len(value)) - 0.5)
    return symbol and mixed(value) and len(value) >= 8 and varied


_WORD = re.compile(r"[A-Z]?[a-z]{3,}")
_VOWELS = frozenset("aeiouy")


def _word(piece: str) -> bool:
    """Reads like a word: a vowel in every four letters, never three vowels in a row (`deploy`,
    `facts`; not `qzxv` or `aeio`). Random letters pass now and then, so it counts only with `wordy`."""
    low = piece.lower()
    return all(_VOWELS & set(low[i : i + 4]) for i in range(len(low) - 3)) and not any(
        set(low[i : i + 3]) <= _VOWELS for i in range(len(low) - 2)
    )


def _kind_of(c: str) -> int:
    return 0 if c.islower() else 1 if c.isupper() else 2


def wordy(value: str) -> bool:
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


HEX = re.compile(r"[0-9a-fA-F]+")
_SLUG = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+")


def secret_value(value: str) -> bool:
    """What a named setting holds when it holds a secret: a key in hex (32+ digits), a random token
    (24+ characters, not words) or a typed password. Never a placeholder, a reference, a dotted or
    word-like name, words joined by dashes, or code (`True)[0]`, `a.Emitter=a.Event`)."""
    if placeholder(value) or reference(value) or any(c in value for c in "()[]"):
        return False
    chain = value.rstrip("=").split("=")
    if len(chain) > 1 and all(NAME.fullmatch(part) for part in chain):
        return False  # assignments chained in minified code
    if HEX.fullmatch(value):
        return len(value) >= 32 and mixed(value)
    if NAME.fullmatch(value) and ("." in value or wordy(value)):
        return False
    if random_looking(value) and not wordy(value):
        return True
    if _SLUG.fullmatch(value) and wordy(value):
        return False  # words joined by dashes, dots or underscores: a header name, a slug, a version
    return typed_password(value, loose=True)


def lore_token(value: str) -> bool:
    """lore's own sign-in token (`lore_` and 32 random bytes in url-safe base64): both cases, varied,
    not words (`lore_` and a long snake_case name is an identifier)."""
    body = value[5:]
    cased = any(c.isupper() for c in body) and any(c.islower() for c in body)
    return cased and entropy(body) >= 4.0 and not wordy(body)


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


def secret_name(match: re.Match[str]) -> bool:
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


def auth_header(match: re.Match[str]) -> bool:
    """`Authorization: Bearer <token>` with a token (16+ characters, letters and digits, not words) or
    `Basic <base64 of user:password>`; never a placeholder, a reference or a value cut short."""
    value = match.group("v")
    after = match.string[match.end("v") : match.end("v") + 1]
    if after in ("…", "$", "{", "<", "*") or placeholder(value) or reference(value):
        return False
    if match.group("scheme").lower() == "basic":
        data = decode(value)
        decoded = data.decode("utf-8", errors="replace") if data is not None else ""
        user, colon, password = decoded.partition(":")
        printable = decoded.isprintable() and "\ufffd" not in decoded
        return printable and bool(user and colon) and len(password) >= 4 and not placeholder(password)
    return len(value) >= 16 and mixed(value) and entropy(value) >= 3.0 and not wordy(value)


def login_password(value: str) -> bool:
    """A password where a netrc entry or a pgpass line puts it: 6+ characters with a digit or a
    symbol, not a placeholder, a reference or a NAME_IN_CAPITALS (`PASSWORD`, `API_TOKEN`)."""
    if len(value) < 6 or placeholder(value) or reference(value) or re.fullmatch(r"[A-Z_]+", value):
        return False
    return mixed(value) or any(not c.isalnum() for c in value)


def netrc(match: re.Match[str]) -> bool:
    after = match.string[match.end() : match.end() + 7]
    login = "login" in match.group("pairs") or re.match(r"\s+login\s", after + " ") is not None
    return login and login_password(match.group("v"))


_HOST = re.compile(r"\*|[A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*")


def pgpass(match: re.Match[str]) -> bool:
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
    if all(HEX.fullmatch(field) for field in [host, *match.group()[1:].split(":")]):
        return False
    return login_password(match.group("v"))


_WRAPPED = re.compile(r"[A-Za-z0-9+/=]{48,}")


def aws_secret_alone(match: re.Match[str]) -> bool:
    """40 characters of base64's alphabet with upper case, lower case and digits, not hex, varied
    (entropy 4+: 40 random characters are at least 4.1), not words, not base64 of text, and not the
    last line of a wrapped base64 block (a PEM certificate's)."""
    value = match.group()
    cased = any(c.isupper() for c in value) and any(c.islower() for c in value)
    if not (cased and mixed(value)) or HEX.fullmatch(value) or "EXAMPLE" in value:
        return False
    if entropy(value) < 4.0 or wordy(value):
        return False
    data = decode(value)
    if data is not None and texty(data.decode("utf-8", errors="replace")):
        return False
    text = match.string
    line_start = text.rfind("\n", 0, match.start()) + 1
    previous = text[text.rfind("\n", 0, max(line_start - 1, 0)) + 1 : max(line_start - 1, 0)].strip()
    line_end = text.find("\n", match.end())
    following = "" if line_end < 0 else text[line_end + 1 : line_end + 200].split("\n", 1)[0].strip()
    wrapped = _WRAPPED.fullmatch(previous) or _WRAPPED.fullmatch(following)
    return not wrapped and not following.startswith("-----END")


_URLSAFE = str.maketrans("-_", "+/")


def decode(run: str) -> bytes | None:
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


def texty(decoded: str) -> bool:
    """Mostly printable text (random bytes, images and archives are not)."""
    if len(decoded) < 12:
        return False
    good = sum(1 for c in decoded if (c.isprintable() and c != "\ufffd") or c in "\n\r\t")
    return good >= 0.9 * len(decoded)


def private_key_bytes(data: bytes) -> bool:
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


# --- round 4: values that pass for passwords without a symbol, command lines, provider shapes -------

_ALGORITHMS = frozenset(
    (
        *("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3", "bcrypt", "scrypt", "argon2"),
        *("argon2i", "argon2d", "argon2id", "pbkdf2", "pbkdf2_sha256", "pbkdf2_sha512", "des3"),
        *("aes128", "aes256", "rc4", "x509", "pkcs12", "utf8", "utf16", "latin1", "base64", "hex"),
    )
)


def plain_password(value: str) -> bool:
    """A value given to a name that says `password` (a word with a year): a typed password, or letters
    and digits both in 6+ characters. Never a placeholder, a reference, an algorithm's name
    (`password_hash=argon2id`) or a dotted or snake_case name (`form.password1`, `pwd_field2`)."""
    value = value.strip("'\"`")
    if placeholder(value) or reference(value) or value.lower() in _ALGORITHMS:
        return False
    if NAME.fullmatch(value) and ("." in value or "_" in value):
        return False
    if any(c in value for c in "()[]"):
        return False
    return (len(value) >= 6 and mixed(value)) or typed_password(value, loose=True) or random_looking(value)


_CLI_REFERENCES = ("env:", "file:", "fd:", "stdin", "prompt", "-")


def cli_password(value: str) -> bool:
    """A password typed on a command line (`mysql -p…`, `sshpass -p …`, `net use … /user:bob …`):
    3+ characters, not a placeholder, a variable, a substitution, a prompt (`*`, nothing) or openssl's
    `env:` / `file:` / `fd:` / `stdin` forms."""
    value = value.strip("'\"`")
    if len(value) < 3 or placeholder(value) or value.startswith(_CLI_REFERENCES):
        return False
    return not (value[0] in "$%<{`(" or "${" in value or "$(" in value)


def discord_token(match: re.Match[str]) -> bool:
    """A Discord bot token's first part is a user id (a snowflake: 17 to 20 digits) in base64."""
    head = match.group().split(".", 1)[0]
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), validate=False)
    except (ValueError, binascii.Error):
        return False
    return decoded.isdigit() and 17 <= len(decoded) <= 20


def random_body(value: str) -> bool:
    """A provider token's body whose shape alone is not telling (hex of a fixed length, a short prefix):
    letters and digits both, and not words."""
    return mixed(value) and not wordy(value)


_PASSWORD_WORDS = ("pass", "pwd")


def assigned(match: re.Match[str]) -> bool:
    """`password=...`, `token: ...`: a random token or a typed password for any of the names, and
    letters and digits alone for a name that says password (`password=` and a word with a year)."""
    value, word = match.group("v"), match.group("word").lower()
    return password_like(value) or (word.startswith(_PASSWORD_WORDS) and plain_password(value))


def named_setting(match: re.Match[str]) -> bool:
    """`DB_PASSWORD=...`, `JWT_SIGNING_KEY=...`: a name that says secret (`secret_name`) given what
    such a setting holds (`secret_value`), or, for a password's name, letters and digits alone."""
    if not secret_name(match):
        return False
    value, word = match.group("v"), match.group("word").lower()
    return secret_value(value) or (word.startswith(_PASSWORD_WORDS) and plain_password(value))


def url_password(value: str) -> bool:
    """The password of `scheme://user:PASSWORD@host`: not a placeholder or a reference, and not a port
    (`http://localhost:8080@evil.example` is a host and a port, then a trick)."""
    if placeholder(value) or value.startswith(("$", "%(", "{", "<")):
        return False
    return not (value.isdigit() and len(value) <= 5)


def weak_cli_password(value: str) -> bool:
    """`cli_password` for an option anyone may write in prose (`--password`): not a lower-case word
    either (`pass the --password flag`)."""
    return cli_password(value) and not re.fullmatch(r"[a-z]+", value.strip("'\"`.,;:)"))
