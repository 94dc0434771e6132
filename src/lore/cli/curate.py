"""`lore facts add|revise`, `lore notes add`: write memory from a terminal, through the same core as
the tools. The only place a likely credential can be stored on purpose: `--allow-secret`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import psycopg

from lore.core import validate
from lore.core.config import load_config
from lore.core.errors import InvalidInput
from lore.core.session import SessionContext, build
from lore.core.timeline import parse_time
from lore.core.workspace import WorkspaceSignal, choose_workspace
from lore.db import connect, migrate
from lore.store import facts, notes

SOURCE = "cli"


@contextmanager
def session_and_connection(workspace: str | None) -> Iterator[tuple[SessionContext, psycopg.Connection]]:
    """The session of the current directory (or --workspace), and a migrated connection."""
    config = load_config()
    signal = (
        WorkspaceSignal(Path(workspace), "--workspace")
        if workspace
        else choose_workspace(None, os.environ, [], os.getcwd())
    )
    session = build(signal, config, os.environ, SOURCE)
    with connect.connect(connect.target(config.database_url).url) as conn:
        migrate.upgrade(conn)
        conn.commit()
        yield session, conn


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
) -> int:
    subj = validate.optional(subject, "--subject", validate.MAX_SUBJECT)
    start, end = parse_time(valid_from, "--valid-from"), parse_time(valid_to, "--valid-to")
    with session_and_connection(workspace) as (session, conn):
        if action == "add":
            if first is None or second is not None:
                raise InvalidInput(
                    "lore facts add takes one STATEMENT.", 'Example: lore facts add "CI runs on push"'
                )
            text = validate.statement(first)
            row = facts.remember(
                conn,
                session.origin,
                text,
                subject=subj,
                valid_from=start,
                valid_to=end,
                allow_secret=allow_secret,
            )
            print(f"Remembered {row.id} in space {row.space}.")
            return 0
        _, lineage = validate.item_id(first or "", expect="f")
        new_text = validate.statement(second) if second is not None else None
        _, new = facts.revise(
            conn,
            session.origin,
            session.readable,
            lineage,
            statement=new_text,
            subject=subj,
            valid_from=start,
            valid_to=end,
            allow_secret=allow_secret,
        )
        print(f"Revised {new.id}: {new.statement}")
        return 0


def note(
    body: str | None,
    *,
    kind: str | None,
    title: str | None,
    tags: Sequence[str] | None,
    workspace: str | None,
    allow_secret: bool,
) -> int:
    text = validate.body(body)
    k = validate.kind(kind)
    head = validate.optional(title, "--title", validate.MAX_TITLE)
    labels = validate.tags(list(tags or []))
    with session_and_connection(workspace) as (session, conn):
        row = notes.remember(
            conn, session.origin, text, kind=k, title=head, tags=labels, allow_secret=allow_secret
        )
        print(f"Remembered {row.id} ({row.kind}) in space {row.space}.")
    return 0
