"""What lore told each agent, and how each fact and note has been used since: the record
(lore.store.injections) as a person reads it, from `lore log`, the web UI and `/api/log`; always
within the spaces the caller may read (a signed-in user sees their own only)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from lore.core.errors import InvalidInput, NotFound
from lore.core.injection import Injection, Usage
from lore.core.timeline import parse_time
from lore.service.runtime import Runtime
from lore.store import injections

MAX_LISTED = 500


def recent(
    rt: Runtime,
    spaces: Sequence[str],
    *,
    client: str | None = None,
    workspace: str | None = None,
    since: object = None,
    limit: int = 20,
    owner: str | None = None,
) -> list[Injection]:
    """The latest records of `spaces` (and the space-less ones of `owner`: the signed-in user, None
    locally), newest first; `since`: an ISO date or time. Replays what this machine's hooks kept in
    the spool first (local mode), so that `lore log` lists every outcome."""
    when: datetime | None = parse_time(since, "since")
    if not 1 <= limit <= MAX_LISTED:
        raise InvalidInput(f"limit must be from 1 to {MAX_LISTED}, not {limit}.", "Ask for fewer records.")
    return rt.transact(
        lambda c: injections.recent(
            c, spaces, client=client, workspace=workspace, since=when, limit=limit, owner=owner
        )
    )


def get(rt: Runtime, spaces: Sequence[str], record_id: object, owner: str | None = None) -> Injection:
    """One record, in full (the text exactly as the agent received it)."""
    number = _record_id(record_id)
    found = rt.transact(lambda c: injections.get(c, spaces, number, owner))
    if found is None:
        raise NotFound(f"No injection record {number} in your spaces.", "`lore log` lists the records.")
    return found


def usage(rt: Runtime, spaces: Sequence[str], ids: Sequence[str]) -> dict[str, Usage]:
    """How each of `ids` (f_N, n_N) was used: shown, cut, returned by search, marked irrelevant."""
    return rt.transact(lambda c: injections.usage(c, spaces, ids))


def _record_id(value: object) -> int:
    text = str(value).strip().removeprefix("#")
    if not text.isdigit() or not 0 < int(text) < 2**62:
        raise InvalidInput(f"{str(value)[:40]!r} is not a record id.", "Use a number from `lore log`.")
    return int(text)
