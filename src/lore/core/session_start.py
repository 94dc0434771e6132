"""Session start as one use case for every reader: what to ask the database for (`Request`), what
it answers (`Snapshot`, one JSON document of the SQL function `lore_session_snapshot`, migration
0012), and the text made from it (`compose`). Pure: the local hook reads the document through psql,
`/api/session-start` and `lore session-start` through psycopg, and all three render it here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from lore.core import clients, envelope, inbox, last_session, measure, naming, render, similarity, stale
from lore.core.config import Config
from lore.core.rows import Fact, Handoff, InstructionSection, from_json
from lore.core.session import SessionContext

MAX_ROWS = render.SESSION_START_MAX_FACTS
INSTRUCTIONS_MAX = 8  # instruction sections read for the block


@dataclass(frozen=True)
class Request:
    """The arguments of `lore_session_snapshot`, in its order."""

    spaces: tuple[str, ...]
    workspace: str
    max_rows: int
    space: str
    root: str
    handoff_hours: int
    doing_max: int
    skip_families: tuple[str, ...] | None  # None: no instruction sections
    instructions_max: int

    def arguments(self) -> tuple[Any, ...]:
        return (
            list(self.spaces),
            self.workspace,
            self.max_rows,
            self.space,
            self.root,
            self.handoff_hours,
            self.doing_max,
            None if self.skip_families is None else list(self.skip_families),
            self.instructions_max,
        )


def request(session: SessionContext, config: Config, client: str) -> Request:
    """What a session start of `client` in `session` reads: the session's readable spaces, the last
    handoff at its root within the configured age, the instruction files the client does not load
    itself (an unknown client: all of them)."""
    known = clients.CLIENTS.get(clients.canonical(client))
    return Request(
        spaces=tuple(session.readable),
        workspace=session.workspace_name,
        max_rows=MAX_ROWS,
        space=session.space,
        root=str(session.root),
        handoff_hours=max(0, config.handoff_max_age_hours),
        doing_max=last_session.HANDOFF_DOING,
        skip_families=tuple(known.loads) if known is not None else (),
        instructions_max=INSTRUCTIONS_MAX,
    )


@dataclass(frozen=True)
class Snapshot:
    facts: list[Fact]
    total: int
    inbox: int = 0  # tasks waiting in the session space's inbox
    unread: int = 0  # unread messages to it
    last: last_session.LastSession | None = None  # the last handoff at the session's root
    instructions: list[InstructionSection] = field(default_factory=list)
    superseded: frozenset[str] = frozenset()  # facts an agent said a newer one replaces
    expired: int = 0  # facts whose valid_to passed in the last 30 days (already hidden)
    kept: tuple[frozenset[str], ...] = ()  # fact groups a person or an agent said to keep as they are


def parse(document: Mapping[str, Any]) -> Snapshot:
    """The Snapshot in `lore_session_snapshot`'s JSON document."""
    last = None
    if document.get("handoff"):
        last = last_session.LastSession(
            from_json(Handoff, document["handoff"]),
            datetime.fromisoformat(document["now"]),
            [(int(lineage), title) for lineage, title in document.get("doing") or []],
            int(document.get("doing_count") or 0),
        )
    return Snapshot(
        [from_json(Fact, row) for row in document["facts"]],
        int(document["total"]),
        int(document.get("inbox") or 0),
        int(document.get("unread") or 0),
        last,
        [from_json(InstructionSection, row) for row in document.get("instructions") or []],
        frozenset(document.get("superseded") or ()),
        int(document.get("expired") or 0),
        tuple(frozenset(group) for group in document.get("kept") or ()),
    )


@dataclass(frozen=True)
class Tidied:
    """The facts a session start shows, once each: copies folded into the first fact they repeat,
    stale facts left out and counted (docs/design.md, Duplicates and conflicts)."""

    facts: list[Fact]  # in render order, distinct; those a newer one may contradict last
    notes: dict[int, str]  # lineage -> `(+1 similar: f_3; may conflict with f_4)`
    hidden: int  # copies folded away
    replaced: int  # left out: an agent said a newer fact replaces them
    paths_gone: int  # left out: they name files that are gone
    folded: tuple[tuple[str, str], ...] = ()  # (a copy folded away, the fact it was folded into)


def tidied(
    snapshot: Snapshot, session: SessionContext, *, check_paths: bool = True, max_chars: int | None = None
) -> Tidied:
    """`snapshot`'s facts in the database's order, without those replaced by a newer one or naming paths
    that are gone (`check_paths`: local mode, where the session's paths are this machine's), copies
    folded into the first fact they repeat. With `max_chars`, only as many facts as that many
    characters of lines can show are looked at (the rest would be cut anyway: the hook's time is
    spent on what is shown). Pure apart from the `stat` calls of the path check."""
    ordered = snapshot.facts  # the database's order (lore_facts_ordered): nothing here sorts
    here = str(session.root)
    if check_paths:
        stale.forget_cache()
    texts: dict[int, similarity.Text] = {}

    def text(fact: Fact) -> similarity.Text:
        made = texts[fact.version_id] = _fact_text(fact)
        return made

    folder = similarity.Folder(text, conflicts=True)
    replaced = gone = used = 0
    for fact in ordered:
        if fact.id in snapshot.superseded:
            replaced += 1
            continue
        if check_paths and stale.gone(fact.statement, fact.workspace, here):
            gone += 1
            continue
        if folder.add(fact):
            used += measure.size(render.fact_line(fact)) + 1
            if max_chars is not None and used > max_chars:
                break
    groups = folder.groups()
    replaced_by = _superseded(groups, texts, snapshot.kept)
    notes = {}
    for g in groups:
        newer = replaced_by.get(g.item.lineage)
        note = render.similar_note([f.id for f in g.similar], [f.id for f in g.conflicts], newer)
        if note:
            notes[g.item.lineage] = note
    hidden = sum(len(g.similar) for g in groups)
    # A fact a newer one may contradict or have replaced goes after the current ones (the budget
    # cuts it first).
    current = [g.item for g in groups if not g.conflicts and g.item.lineage not in replaced_by]
    doubtful = [g.item for g in groups if g.conflicts or g.item.lineage in replaced_by]
    folded = tuple((f.id, g.item.id) for g in groups for f in g.similar)
    return Tidied([*current, *doubtful], notes, hidden, replaced, gone, folded)


def _superseded(
    groups: list[similarity.Group[Fact]],
    texts: Mapping[int, similarity.Text],
    kept: tuple[frozenset[str], ...],
) -> dict[int, str]:
    """The facts shown that a newer change statement shown too says it replaced (lore.core.naming
    .replaces), each with the newest such statement: lineage -> its id. Until an agent confirms it
    (`supersedes`: then the older one is left out) or says both hold (a kept group), the older one
    is marked rather than shown as true beside it."""
    shown = [g.item for g in groups]
    changes = [f for f in shown if texts[f.version_id].gone]
    out: dict[int, str] = {}
    for change in sorted(changes, key=lambda f: f.stated, reverse=True):
        said = texts[change.version_id]
        for old in shown:
            if old.lineage in out or old.lineage == change.lineage or old.stated >= change.stated:
                continue
            if any({old.id, change.id} <= group for group in kept):
                continue
            if naming.replaces(said, texts[old.version_id]):
                out[old.lineage] = change.id
    return out


def _fact_text(fact: Fact) -> similarity.Text:
    return similarity.Text.of(fact.statement, fact.subject)


def compose(
    snapshot: Snapshot, session: SessionContext, config: Config, client: str, *, check_paths: bool = True
) -> render.Rendered:
    """The session-start text for `client`: within the configured budget (clamped for the client),
    each fact once, stale ones left out and counted."""
    budget = render.clamp_budget(config.session_start_max_chars, client)
    kept = tidied(snapshot, session, check_paths=check_paths, max_chars=budget)
    left_out = kept.hidden + kept.replaced + kept.paths_gone
    out = render.session_start(
        kept.facts,
        space=session.space,
        max_chars=budget,
        total=max(0, snapshot.total - left_out),
        status_line=inbox.status_line(snapshot.inbox, snapshot.unread),
        last=snapshot.last,
        instructions=snapshot.instructions,
        fence=envelope.fence_for(client),
        notes=kept.notes,
        tidy_line=render.tidy_line(kept.replaced, kept.paths_gone, snapshot.expired),
    )  # what the record of it says was folded, apart from what the budget cut (lore.core.injection)
    return replace(out, folded=tuple(x for x in kept.folded if x[1] in out.shown_ids))
