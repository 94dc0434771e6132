"""`lore facts add|revise`, `lore notes add`: write memory from a terminal, through the same use cases
as the tools (lore.service.memory). The only place a likely credential can be stored on purpose:
`--allow-secret`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from lore.cli.context import runtime
from lore.core import validate
from lore.core.errors import InvalidInput
from lore.service import memory


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
    with runtime() as rt:
        session = rt.command_session(workspace)
        if action == "add":
            if first is None or second is not None:
                raise InvalidInput(
                    "lore facts add takes one STATEMENT.", 'Example: lore facts add "CI runs on push"'
                )
            done = memory.remember_fact(rt, session, first, supersedes=supersedes, **fields)  # type: ignore[arg-type]
            print(done.text())
            return 0
        _, new = memory.revise_fact(rt, session, first or "", statement=second, **fields)  # type: ignore[arg-type]
        print(f"Revised {new.id}: {new.statement}")
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
        raw = sys.stdin.buffer.read(limit)
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
    with runtime() as rt:
        session = rt.command_session(workspace)
        done = memory.remember_note(
            rt,
            session,
            body,
            kind=kind,
            title=title,
            tags=list(tags or []),
            allow_secret=allow_secret,
            when=when,
        )
        print(done.text())
    return 0
