"""Likely credentials in text that is about to be stored. Pure: no database, no I/O.

Memory is shown to every agent session of a space, exported in plain text and kept in history, so a
write that holds a credential is refused (docs/design.md, Forget and purge: erasing one is
`lore purge`). A person who means to store such text passes `--allow-secret` to the CLI command; no
tool argument can do it. A handoff, which is not a deliberate write, has each finding redacted.

What is detected (`rules`, in the order the detectors claim text; each shape narrow enough that
ordinary prose and code do not match, `judge` deciding what a match is):

    key blocks    -----BEGIN ... PRIVATE KEY----- with key material (to its END line), PuTTY key
                  files, GCP service-account JSON
    providers     tokens with a prefix of their own (`providers`: GitHub, GitLab, Slack, OpenAI,
                  Anthropic, Stripe, AWS, Google, Azure, npm, PyPI, Hugging Face, SendGrid, lore's own,
                  and since Trust round 4 the prefixes the public scanners' default rule sets know:
                  DigitalOcean, Shopify, Vault, Doppler, Databricks, Linear, Notion, Atlassian, Grafana,
                  New Relic, 1Password, age, Groq, xAI, Replicate, Postman, ...) and tokens of a fixed
                  shape (Telegram and Discord bots, Azure AD client secrets, FCM server keys, Sentry DSNs)
    JWTs          three base64url parts whose header decodes to JSON naming an `alg`
    HTTP auth     an Authorization header's credentials (Bearer or token; Basic: base64 of user:pass)
    URLs          `scheme://user:pass@host` (an empty user, a raw `@` in the password too), a password
                  or a random token in a query (`jdbc:…?user=app&password=…`, `?access_token=…`)
    connection    key=value strings (ADO.NET, ODBC with `{braced}` values, JDBC's `;password=`),
    strings       libpq (`host=… password=…`), Oracle's `user/pass@db`
    command lines `curl -u user:pass`, `mysql -pPASS`, `sshpass -p`, `redis-cli -a`, `ldapsearch -w`,
                  `docker login -p`, `--password X` of any command, openssl's `pass:X`, `smbclient -U
                  user%pass`, `net use … /user:X pass`, `htpasswd -b`, `sqlplus user/pass@db`
    netrc, pgpass `machine HOST login USER password …` and `host:port:database:user:password` lines
    assignments   a random value given to api_key, secret, token, password...; a typed password (letters,
                  digits and a symbol), or letters and digits for a name that says password
                  (`password=` a word and a year)
    settings      a setting whose name says it is a secret (`DB_PASS`, `PGPASSWORD`, `JWT_SIGNING_KEY`,
                  not `TOKEN_URL`) given a hex key, a random token or a password
    AWS           a lone 40-character secret key (varied, not words, not base64 of text)

Placeholders (`password`, `***`, `<token>`, `${VAR}`, `changeme`, ...) and references (a variable, a
call, a path, a URL, `${{ secrets.X }}`) are never findings.

Text is read the way a person would read it, not only byte for byte (`normalise`; docs/reliability.md,
Secrets): NFKC without invisible format characters, combining marks or variation selectors;
percent-escapes decoded (`token%3Dghp_…`); a token with spaces or line breaks inside joined again from
its prefix; every long base64 run decoded and scanned again; `findings` reads the fields of one item
together as well as alone. Offsets and lines are always those of the text as given.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Sequence

from lore.core.errors import Refused
from lore.core.secrets.normalise import FORMAT_CHARACTERS
from lore.core.secrets.scanner import Finding, scan

__all__ = [
    "DELIBERATE",
    "FORMAT_CHARACTERS",
    "Field",
    "Finding",
    "findings",
    "refuse",
    "scan",
]

# How a person stores each kind of item deliberately (the only way: a CLI flag).
DELIBERATE = {
    "fact": 'lore facts add "…" --allow-secret',
    "note": 'lore notes add "…" --allow-secret',
    "task": 'lore tasks file "TITLE" "BODY" --allow-secret',
    "message": 'lore messages send TO "…" --allow-secret',
    "markdown": "lore import-markdown DIR --allow-secret",
}


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
