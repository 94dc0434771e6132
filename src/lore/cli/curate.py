"""`lore facts add|revise`, `lore notes add`: write memory from a terminal, through the same use cases
as the tools (lore.service.memory), here or on the server this machine uses (lore.cli.gateway). The
only place a likely credential can be stored on purpose: `--allow-secret`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from lore.cli.context import gateway
from lore.core import validate
from lore.core.errors import InvalidInput


def fact(
    action: str,
    first: str | None,
    second: str | None,
    *,
    subject: str | None,
    valid_from: str | None,
    valid_to: str | None,
    workspace: str | None,
    allow_secret: bool,
    supersedes: str | None = None,
) -> int:
    fields = {
        "subject": subject,
        "valid_from": valid_from,
        "valid_to": valid_to,
        "allow_secret": allow_secret,
    }
    if action == "add" and (first is None or second is not None):
        raise InvalidInput("lore facts add takes one STATEMENT.", 'Example: lore facts add "CI runs on push"')
    with gateway() as gw:
        if action == "add":
            assert first is not None
            statement = _stdin_text("statement") if first == "-" else first
            print(gw.remember_fact(workspace, statement, supersedes=supersedes, **fields)["message"])
            return 0
        if second == "-":
            second = _stdin_text("statement")
        new = gw.revise_fact(workspace, first or "", second, **fields)["fact"]
        print(f"Revised {new['id']}: {new['statement']}")
        return 0


def body_of(body: str | None, file: str | None) -> str:
    """The note's text: the argument, `-` for standard input, or `--file PATH` (read as UTF-8, at
    most the note limit and a little more, so that the limit's own message says how large it is)."""
    if file is not None and body is not None:
        raise InvalidInput("Give the body or --file, not both.", "Example: lore notes add --file notes.md")
    limit = validate.MAX_BODY_BYTES * 4 + 1
    if file is not None:
        try:
            with open(file, "rb") as handle:
                raw = handle.read(limit)
        except OSError as exc:
            raise InvalidInput(f"Cannot read {file}: {exc.strerror}.", "Name a readable text file.") from None
    elif body == "-":
        return _stdin_text("note's text", limit)
    elif body is None:
        raise InvalidInput(
            "lore notes add takes BODY, - (standard input) or --file PATH.", 'Example: lore notes add "…"'
        )
    else:
        return body
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput("The note's text is not UTF-8.", "Convert it to UTF-8 and add it again.") from None


def _stdin_text(what: str, limit: int = validate.MAX_STATEMENT * 4 + 1) -> str:
    """`-`: the text on standard input (UTF-8, at most `limit` bytes read: the limit's own message
    then says how long it is)."""
    try:
        return sys.stdin.buffer.read(limit).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InvalidInput(f"The {what} is not UTF-8.", "Convert it to UTF-8 and add it again.") from None


def note(
    body: str | None,
    *,
    kind: str | None,
    title: str | None,
    tags: Sequence[str] | None,
    workspace: str | None,
    allow_secret: bool,
    when: str | None = None,
) -> int:
    with gateway() as gw:
        done = gw.remember_note(
            workspace,
            body or "",
            kind=kind,
            title=title,
            tags=list(tags or []),
            allow_secret=allow_secret,
            when=when,
        )
    print(done["message"])
    return 0
