"""Data in and out: export and import (JSON Lines, lossless, whole database or one space), markdown
and agents' instruction files as notes, and purge (a person erasing an item for good)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from lore.core.errors import InvalidInput, NotFound
from lore.core.session import SessionContext
from lore.service import retrieval
from lore.service.runtime import Runtime
from lore.store import instructions, keywords, markdown, purge, transfer


def export(rt: Runtime, space: str | None = None) -> Iterator[str]:
    """The export's lines, streamed from one connection (held while they are read): one space, or the
    whole database (an operator's); a signed-in user (sign-in mode) gets their own spaces only, and
    only one of them by `space`."""
    spaces = None
    if rt.accounts is not None:
        mine = rt.config().ids
        if space is not None and space not in mine:
            user = rt.user() or ""
            space = f"{user}/{space}" if f"{user}/{space}" in mine else None
            if space is None:
                known = ", ".join(mine)
                raise NotFound(
                    "No such space among yours.", f"Export one of yours ({known}), or all of them."
                )
        spaces = mine
    return _lines(rt, space, spaces)


def _lines(rt: Runtime, space: str | None, spaces: Sequence[str] | None) -> Iterator[str]:
    with rt.connection() as conn, conn.transaction():  # one snapshot, read through a server-side cursor
        yield from transfer.export(conn, space, spaces=spaces)


def load(rt: Runtime, handle: TextIO) -> transfer.Report:
    """Import an export read from `handle` (what is there already is kept; nothing doubles)."""
    report = rt.transact(lambda c: transfer.load(c, transfer.lines_of(handle)))
    rt.transact(keywords.compact)  # the imported notes' words, into the keyword side's counts
    return report


def import_markdown(
    rt: Runtime, session: SessionContext, path: Path, *, allow_secret: bool = False
) -> tuple[markdown.Files, markdown.Outcome]:
    """Every markdown file at `path`, one note per section, into the session's space."""
    collected = markdown.files_in(path)
    root = Path(session.signal.path)
    found: list[markdown.Section] = []
    for file in collected.files:
        found.extend(markdown.sections(markdown.read(file), markdown.file_key(file, root)))
    outcome = rt.transact(
        lambda c: markdown.apply(c, session.origin, str(root), found, allow_secret=allow_secret)
    )
    retrieval.poke(rt)
    return collected, outcome


def import_instructions(
    rt: Runtime, session: SessionContext, folder: Path | None, *, allow_secret: bool = False
) -> tuple[instructions.Found, instructions.Imported]:
    """The agents' instruction files (CLAUDE.md, AGENTS.md, ...) under `folder` (default: the
    workspace's root), one note per section; sections no longer in those files are forgotten."""
    root = Path(session.root)
    where = folder if folder is not None else root
    if not Path(os.path.realpath(where)).is_relative_to(os.path.realpath(root)):
        raise InvalidInput(
            f"{where} is outside the workspace's repository {root}: its instruction files would be "
            "filed under a repository they are not in.",
            f"Run `lore import-instructions` in {where} (or pass --workspace {where}).",
        )
    found = instructions.find(where, root)
    key = markdown.file_key(where, root)
    scope = "" if key == "." else key
    done = rt.transact(
        lambda c: instructions.apply(c, session.origin, str(root), found, scope, allow_secret=allow_secret)
    )
    retrieval.poke(rt)
    return found, done


def purge_plan(rt: Runtime, item: str) -> purge.Plan:
    """What purging `item` would erase (nothing is changed)."""
    purge.parse_id(item)
    return rt.transact(lambda c: purge.plan(c, item))


def purge_item(rt: Runtime, item: str, by: str, *, full: bool = False) -> purge.Plan:
    """Erase every version of `item` and what points at it, keep an id-only audit row, and vacuum
    the tables (FULL: rewrite them) so the text leaves the files too."""
    done = rt.transact(lambda c: purge.purge(c, item, by))
    rt.transact(lambda c: purge.vacuum(c, item, full=full))
    return done
