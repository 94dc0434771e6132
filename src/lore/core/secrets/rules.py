"""Every detector, in the order they claim text (the more specific first): key blocks, the providers'
tokens (`providers`), then the shapes that hold a password or a token in a larger text: JWTs and
Authorization headers, URLs and connection strings in their common forms, passwords on command lines,
netrc and pgpass lines, assignments and settings, and last a lone AWS secret key."""

from __future__ import annotations

import re
from collections.abc import Callable

from lore.core.secrets import judge, providers
from lore.core.secrets.rule import Rule, rule, token

_KEY_NAME = r"(?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?"

FIRST: tuple[Rule, ...] = (
    # The block to its END line when there is one (a handoff redacts the whole key, not its first line).
    rule(
        "private key block",
        rf"-----BEGIN {_KEY_NAME}-----[\s\S]{{0,300}}?[A-Za-z0-9+/=]{{40,}}"
        rf"(?:[\s\S]{{0,12000}}?-----END {_KEY_NAME}-----)?",
        ("private key",),
    ),
    rule(
        "PuTTY private key",
        r"PuTTY-User-Key-File-[23]:[^\n]*\n[\s\S]{0,4000}?Private-Lines:[ \t]*\d+[ \t]*\r?\n"
        r"[A-Za-z0-9+/=]{16,}(?:\r?\n[A-Za-z0-9+/=]+)*",
        ("putty-user-key-file",),
    ),
    rule(
        "GCP service-account key",
        r"\"type\"\s*:\s*\"service_account\"[^{}]{0,4000}?\"private_key(?:_id)?\"\s*:\s*\"[^\"]{16,}\"",
        ("service_account",),
    ),
    rule(
        "GCP service-account key",
        r"\"private_key(?:_id)?\"\s*:\s*\"[^\"]{16,}\"[^{}]{0,4000}?\"type\"\s*:\s*\"service_account\"",
        ("service_account",),
    ),
)


def _after(command: str) -> Callable[[re.Match[str]], bool]:
    """A check: `command` is written on the match's line before it (or on a line it continues with a
    trailing backslash), so that `-p…` counts after `mysql` and not after `mkdir`."""
    pattern = re.compile(command)

    def check(match: re.Match[str]) -> bool:
        text, start = match.string, match.start()
        line = text.rfind("\n", 0, start) + 1
        for _ in range(5):  # a command continued over lines with `\`
            if line < 2 or text[line - 2] != "\\":
                break
            line = text.rfind("\n", 0, line - 1) + 1
        return pattern.search(text, line, start) is not None

    return check


def _flag(flag: str, command: str, accept: Callable[[str], bool] = judge.cli_password) -> Rule:
    """A password given to `flag` of a `command` (`sshpass -p PASS`, `redis-cli -a PASS`)."""
    return rule(
        "password on a command line",
        rf"(?<![\w-]){flag}[ \t]+[\"']?(?P<v>[^\s\"'`]{{1,256}})",
        (flag.lower(),),
        "v",
        accept,
        check=_after(command),
    )


_CONN_KEYS = re.compile(
    r"(?i)(?:^|[;\s\"'])(?:server|host|hostname|address|addr|data source|dsn|driver|database|initial catalog"
    r"|uid|user id|user|username|provider|port|network address)[ \t]*="
)


def _connection_string(match: re.Match[str]) -> bool:
    """`Password=...` counts in a `key=value;` string that names a server, a user or a driver too."""
    text = match.string
    start, end = text.rfind("\n", 0, match.start()) + 1, text.find("\n", match.end())
    line = text[start : len(text) if end < 0 else end]
    keys = [k for k in _CONN_KEYS.finditer(line) if not k.group().lower().lstrip("; \"'").startswith("p")]
    return ";" in line and bool(keys)


_MYSQL = (
    r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mysqlpump|mariadb(?:-dump|-admin)?)\b"
)
_LOGIN = (
    r"\b(?:sshpass|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport"
    r"|(?:docker|podman|buildah|skopeo|nerdctl|oras|az|helm[ \t]+registry)[ \t]+login)\b"
)

LAST: tuple[Rule, ...] = (
    rule(
        "JSON Web Token",
        token(["eyJ"], r"[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{16,}", fold=False),
        ("eyj",),
        accept=judge.jwt,
    ),
    rule(
        "HTTP Authorization header",
        r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:(?P<scheme>bearer|basic|token))[ \t]+"
        r"(?P<v>[A-Za-z0-9._~+/\-]{8,}=*)",
        ("authorization",),
        "v",
        check=judge.auth_header,
    ),
    # The user may be empty (`redis://:PASSWORD@host`) and the password may hold a raw `@`, `?` or `#`
    # (pasted unencoded): the host is what follows the last `@` before the path.
    rule(
        "password in a URL",
        r"(?i:[a-z][a-z0-9+.\-]{1,20})://[^\s:/@?#\"'<>]{0,128}:(?P<v>[^\s/\"'<>]{4,256})"
        r"@[A-Za-z0-9.\-_\[\]]+",
        ("://",),
        "v",
        judge.url_password,
    ),
    rule(
        "password in a URL query",
        r"[?&;](?i:password|passwd|pwd|pass)=(?P<v>[^&;\s\"'#<>]{3,256})",
        ("password=", "passwd=", "pwd=", "pass="),
        "v",
        judge.cli_password,
    ),
    rule(
        "token in a URL query",
        r"[?&](?i:access_token|token|api_key|apikey|api-key|client_secret|secret|auth_token|private_token|key)"
        r"=(?P<v>[A-Za-z0-9%._~+/\-]{16,256})",
        ("token=", "key=", "secret="),
        "v",
        lambda v: judge.random_looking(v) and not judge.wordy(v) and not judge.reference(v),
    ),
    rule(
        "password in a connection string",
        r"jdbc:oracle:[a-z]+:[^/\s@:\"']+/(?P<v>[^@\s/\"']{3,128})@",
        ("jdbc:oracle",),
        "v",
        judge.cli_password,
    ),
    rule(
        "password in a connection string",
        r"(?<![\w.])(?i:password|pwd)[ \t]*=[ \t]*(?P<v>\{[^{}\n]{1,128}\}|[^;\s\"'{}]{3,128})"
        r"(?=[ \t]*(?:;|\"|'|$))",
        ("passw", "pwd"),
        "v",
        lambda v: judge.cli_password(v.strip("{}")),
        re.MULTILINE,
        check=_connection_string,
    ),
    rule(
        "password in a connection string",
        r"(?i:host|hostaddr|hostname|dbname|user|port)=\S+(?:\s+\w+=\S+)*?\s+(?i:password)=(?P<v>[^\s'\"]{3,128})",
        ("password=",),
        "v",
        judge.cli_password,
    ),
    rule(
        "password in a connection string",
        r"(?i:password)=(?P<v>[^\s'\";]{3,128})(?:\s+\w+=\S+)*?\s+(?i:host|hostaddr|hostname|dbname|user)=",
        ("password=",),
        "v",
        judge.cli_password,
    ),
    rule(
        "password in a netrc entry",
        r"(?:(?P<m>machine)|default)(?<![A-Za-z0-9_].{7})(?(m)\s+\S+)"
        r"(?P<pairs>(?:\s+(?:login|account|port)\s+\S+){0,3})\s+password\s+(?P<v>\S+)",
        ("password",),
        "v",
        check=judge.netrc,
    ),
    rule(
        "password in a pgpass line",
        r":(?:\d{1,5}|\*)(?::(?:[^\s:\\\"'`]|\\.)+){2}:(?P<v>(?:[^\s:\\\"'`]|\\.)+)(?![^\s\"'`)\]])",
        (":",),
        "v",
        check=judge.pgpass,
    ),
    # --- passwords on command lines
    rule(
        "password on a command line",
        r"(?<![\w-])(?:-u(?:[ \t]+|=)?|--(?:proxy-)?user(?:[ \t]+|=))[\"']?[^\s:\"'@]{1,64}"
        r":(?P<v>[^\s\"'`]{3,256})",
        ("-u", "--user", "--proxy-user"),
        "v",
        judge.cli_password,
        check=_after(r"\b(?:curl|wget|http|https|xh|httpie)\b"),
    ),
    rule(
        "password on a command line",
        r"(?<![\w-])-p(?P<v>[^\s\"'`\-][^\s\"'`]{2,255})",
        ("-p",),
        "v",
        judge.cli_password,
        check=_after(_MYSQL),
    ),
    _flag("-p", _LOGIN),
    _flag("-a", r"\bredis-cli\b"),
    _flag("-w", r"\bldap(?:search|modify|add|delete|passwd|whoami|compare|modrdn)\b"),
    rule(
        "password on a command line",
        r"(?<![\w-])--(?:[a-z]+-)*(?:password|passwd|pass)(?:=|[ \t]+)[\"']?(?P<v>[^\s\"'`]{3,256})",
        ("--",),
        "v",
        judge.weak_cli_password,
    ),
    rule(
        "password on a command line",
        r"(?<![\w-])-pass(?:in|out)?[ \t]+[\"']?pass:(?P<v>[^\s\"'`]{1,256})",
        ("pass:",),
        "v",
        judge.cli_password,
    ),
    rule(
        "password on a command line",
        r"(?<![\w-])-U[ \t]*[\"']?[^\s%\"']+%(?P<v>[^\s\"'`]{3,256})",
        ("%",),
        "v",
        judge.cli_password,
        check=_after(r"\b(?:smbclient|smbget|smbcacls|rpcclient|smbmap|nxc|crackmapexec)\b"),
    ),
    rule(
        "password on a command line",
        r"(?i:/u(?:ser)?):\S+[ \t]+[\"']?(?P<v>[^\s/*\"'][^\s\"']{2,255})",
        ("/u",),
        "v",
        judge.cli_password,
        check=_after(r"(?i)\bnet[ \t]+use\b"),
    ),
    rule(
        "password on a command line",
        r"(?i:\bnet[ \t]+use)(?:[ \t]+[A-Za-z]:)?[ \t]+\\\\\S+[ \t]+[\"']?(?P<v>[^\s/*\"'][^\s\"']{2,255})",
        ("net",),
        "v",
        judge.cli_password,
    ),
    rule(
        "password on a command line",
        r"\bhtpasswd[ \t]+-[a-zA-Z]*b[a-zA-Z]*[ \t]+\S+[ \t]+\S+[ \t]+[\"']?(?P<v>[^\s\"'`]{3,256})",
        ("htpasswd",),
        "v",
        judge.cli_password,
    ),
    rule(
        "password on a command line",
        r"\b(?:sqlplus|rman|expdp|impdp|sqlldr)[ \t]+(?:-\w+[ \t]+)*[\"']?[^\s/@\"']+"
        r"/(?P<v>[^@\s/\"']{3,128})@",
        ("sqlplus", "rman", "expdp", "impdp", "sqlldr"),
        "v",
        judge.cli_password,
    ),
    # --- assignments and settings
    rule(
        "secret assigned in code",
        r"(?i:api[_\-]?key|apikey|secret(?:[_\-]?key)?|access[_\-]?token|auth[_\-]?token|token|password"
        r"|passwd|client[_\-]?secret|private[_\-]?key)[\"']?\s*(?::|=|:=|=>)\s*[\"'](?P<v>[A-Za-z0-9_\-+/=.]{24,256})[\"']",
        ("api", "secret", "token", "passw", "private"),
        "v",
        lambda v: judge.random_looking(v) and not judge.placeholder(v),
    ),
    rule(
        "password assigned",
        r"(?<![:/])(?P<word>(?i:password|passwd|pwd|passphrase|secret|token|api[_\-]?key))[\"']?"
        r"[ \t]*(?::|=|:=|=>)[ \t]*[\"'`]?(?P<v>[^\s\"'`<>;,]{6,128})",
        ("passw", "pwd", "passphrase", "secret", "token", "api"),
        "v",
        check=judge.assigned,
    ),
    rule(
        "secret in a named setting",
        r"(?=[AaEeHhMmPpSsTt])(?i:(?P<word>pass(?:words?|wd|phrase)?|pwd|secrets?|tokens?|api[_\-]?keys?"
        r"|apikeys?|(?:private|signing|encryption|access|master|hmac|auth)[_\-]?keys?|auth))"
        r"(?P<rest>(?:(?:[_.\-]|(?<=[a-z])(?=[A-Z]))[A-Za-z0-9]+){0,4})"
        r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*[\"'`]?(?P<v>[^\s\"'`<>;,]{6,256})",
        (
            *("pass", "pwd", "secret", "token", "api", "private", "signing", "encryption", "access"),
            *("master", "hmac", "auth"),
        ),
        "v",
        check=judge.named_setting,
        # A name's words are everywhere in prose; an assignment of 6+ characters is not, and its regex
        # is 10 times faster than the rule's (which tries its words at every a, e, h, m, p, s and t).
        gate=r"(?:=|:)[ \t]*[\"'`]?[^\s\"'`<>;,]{6}",
    ),
    # No word to look for: 40 characters of base64 standing alone. The pattern only gets past its
    # first character at the start of a run of them, so ordinary prose costs one pass of the regex.
    rule(
        "AWS secret access key, unlabelled",
        r"(?<![A-Za-z0-9/+=_\-.:~%@])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=_\-])",
        (),
        check=judge.aws_secret_alone,
    ),
)

RULES: tuple[Rule, ...] = (*FIRST, *providers.KNOWN, *providers.PREFIXED, *providers.SHAPED, *LAST)
TOKEN_RULES = tuple(r for r in RULES if r.spaced is not None)
TOKEN_HINTS = tuple({hint for r in TOKEN_RULES for hint in r.hints})
