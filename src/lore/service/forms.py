"""The web UI's forms on an item (revise or forget a fact; edit, link or forget a note; move a task),
one use case each: in one transaction, the item is found among the person's spaces, its own space is
the one the write acts from (a person writes each item where it lives, never elsewhere), and the write
is the same use case the MCP tools call (lore.service.memory, .search, .work), run on that transaction
(lore.service.pages.within). The pages' use cases are lore.service.pages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from lore.core.errors import Refused
from lore.core.rows import Fact, Note, Task
from lore.core.session import Acting, Origin
from lore.core.timeline import parse_time
from lore.core.users import Principal
from lore.service import accounts, memory, retrieval, search, work
from lore.service.pages import write
from lore.service.runtime import Runtime
from lore.store import auth, graph


@dataclass(frozen=True)
class Person:
    """Who fills in a form: their spaces (what they may read, and write each item of in its own), and
    the `source` their writes carry (`web`)."""

    spaces: tuple[str, ...]
    source: str

    def acting(self, space: str) -> Acting:
        """The person acting in `space`, an item's own: one of theirs, or refused."""
        if space not in self.spaces:
            raise Refused(f"Space {space!r} is not one of yours.", "Change items of your own spaces only.")
        return Acting(Origin(space, self.source, None), self.spaces)


def revise_fact(
    rt: Runtime,
    person: Person,
    fact_id: object,
    *,
    statement: object,
    subject: object,
    valid_from: object,
    valid_to: object,
) -> Fact:
    """A new version of the fact, from its own space; returns the version it replaced. The form shows
    times to the second: the same instant sent back is no change."""

    def act(same: Runtime) -> Fact:
        old = memory.fact_history(same, person.spaces, fact_id)[-1]
        start = None if _same_instant(valid_from, old.valid_from) else valid_from
        end = None if old.valid_to is not None and _same_instant(valid_to, old.valid_to) else valid_to
        memory.revise_fact(
            same,
            person.acting(old.space),
            old.id,
            statement=statement,
            subject=subject,
            valid_from=start,
            valid_to=end,
        )
        return old

    return write(rt, act)


def _same_instant(value: object, then: datetime) -> bool:
    given = parse_time(value, "valid time")
    return given is not None and abs(given - then) < timedelta(seconds=1)


def forget(rt: Runtime, person: Person, item_id: object, reason: object, *, expect: str) -> Fact | Note:
    """Forget a fact (`expect` "f") or a note ("n"), from its own space; returns it (as it was)."""

    def act(same: Runtime) -> Fact | Note:
        item: Fact | Note
        if expect == "f":
            item = memory.fact_history(same, person.spaces, item_id)[-1]
        else:
            item = memory.note(same, person.spaces, item_id)
        return memory.forget(same, person.acting(item.space), item.id, reason)

    return write(rt, act)


def edit_note(
    rt: Runtime,
    person: Person,
    note_id: object,
    *,
    body: object,
    kind: object,
    title: object,
    tags: Sequence[object],
) -> Note:
    """A new version of the note, from its own space; returns the version it replaced."""

    def act(same: Runtime) -> Note:
        old = memory.note(same, person.spaces, note_id)
        memory.revise_note(
            same, person.acting(old.space), old.id, body=body, kind=kind, title=title, tags=tags
        )
        return old

    done = write(rt, act)
    retrieval.poke(rt)  # committed now: the new version is there to embed
    return done


def link_note(
    rt: Runtime, person: Person, note_id: object, relation: object, other: object, *, incoming: bool
) -> tuple[Note, graph.Edge]:
    """Link a note and another (`incoming`: other -relation-> note), from the note's own space."""

    def act(same: Runtime) -> tuple[Note, graph.Edge]:
        found = memory.note(same, person.spaces, note_id)
        source, target = (other, found.id) if incoming else (found.id, other)
        return found, search.link_notes(same, person.acting(found.space), source, relation, target)

    return write(rt, act)


def move_task(rt: Runtime, person: Person, task_id: object, status: str, note: str | None) -> Task:
    """Set a task's status, from its own space; returns the task as it was."""

    def act(same: Runtime) -> Task:
        task, _ = work.task(same, person.spaces, task_id)
        work.update_task(same, person.acting(task.space), task_id, status, note)
        return task

    return write(rt, act)


def web_session(
    rt: Runtime, token: str, secret: str, client_id: str, until: Callable[[Principal], datetime]
) -> tuple[Principal, datetime] | None:
    """Sign-in mode's sign-in form: the personal token checked and a web session (`secret`, a child
    of that token, ending at `until(principal)`) started for its user, in one transaction. None: not
    a valid personal token (nothing written; what does not look like one never reaches the database)."""
    if not auth.looks_like_token(token):
        return None

    def act(same: Runtime) -> tuple[Principal, datetime] | None:
        principal = accounts.verify(same, token, ("personal",))
        if principal is None:
            return None
        end = until(principal)
        accounts.start_web_session(same, principal, secret, client_id, end)
        return principal, end

    return write(rt, act)
