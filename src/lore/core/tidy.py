"""What `lore tidy` and the web UI's Tidy page show for a space (docs/design.md, Duplicates and
conflicts): clusters of near duplicates, likely conflicts and stale items, each with the acts that
settle it (merge, keep both, forget). Pure: lore.service.tidy loads the items and the audit, this
module groups them and says it, for a terminal and as JSON.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from lore.core import advice, naming, render, similarity
from lore.core.inert import printable
from lore.core.rows import Fact, Note

UNUSED_DAYS = 60  # never shown at a session start nor returned by a search for this long: stale


@dataclass(frozen=True)
class Entry:
    """An item as tidy lists it."""

    id: str
    text: str
    subject: str | None
    kind: str  # fact, or the note's kind
    recorded_at: datetime
    source: str
    workspace: str | None

    @classmethod
    def of(cls, item: Fact | Note) -> Entry:
        if isinstance(item, Fact):
            return cls(
                item.id, item.statement, item.subject, "fact", item.recorded_at, item.source, item.workspace
            )
        text = f"{item.title}: {item.body}" if item.title else item.body
        return cls(item.id, text, None, item.kind, item.recorded_at, item.source, item.workspace)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text[:1000],
            "subject": self.subject,
            "kind": self.kind,
            "recorded_at": self.recorded_at.isoformat(),
            "source": self.source,
            "workspace": self.workspace,
        }


@dataclass(frozen=True)
class Cluster:
    """Items that say the same thing; the first (the newest) is the one a merge keeps by default."""

    items: tuple[Entry, ...]

    def as_json(self) -> dict[str, Any]:
        return {"items": [e.as_json() for e in self.items], **_settled([e.id for e in self.items])}


@dataclass(frozen=True)
class Conflict:
    """Two facts about one subject that likely contradict each other: the newer first."""

    newer: Entry
    older: Entry

    def as_json(self) -> dict[str, Any]:
        return {
            "items": [self.newer.as_json(), self.older.as_json()],
            "subject": self.newer.subject,
            **_settled([self.newer.id, self.older.id]),
            "supersede": f"lore facts add --subject ... --supersedes {self.older.id} (or merge)",
        }


def _settled(ids: Sequence[str]) -> dict[str, str]:
    """The commands that settle a group (the first kept by a merge), as lore.core.advice words them."""
    return {"merge": advice.merge(ids[0], ids[1:], advice.CLI), "keep": advice.keep(ids, advice.CLI)}


@dataclass(frozen=True)
class Stale:
    entry: Entry
    reason: str

    def as_json(self) -> dict[str, Any]:
        return {**self.entry.as_json(), "reason": self.reason, "forget": f"lore tidy forget {self.entry.id}"}


@dataclass(frozen=True)
class Act:
    """One row of the audit (lore.store.tidy.Action), as tidy lists it."""

    id: int
    at: datetime
    action: str
    items: tuple[str, ...]
    target: str | None
    reason: str | None
    source: str
    undone_at: datetime | None

    def describe(self) -> str:
        items = ", ".join(self.items)
        done = {
            "merge": f"merged {items} into {self.target}",
            "keep": f"kept {items} apart",
            "forget": f"forgot {items}" + (f" ({self.reason})" if self.reason else ""),
            "supersede": f"{self.target} replaces {items}",
        }[self.action]
        undone = f"; undone {self.undone_at:%Y-%m-%d %H:%M}" if self.undone_at else ""
        return f"{done} ({self.source}, {self.at:%Y-%m-%d %H:%M}{undone})"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "at": self.at.isoformat(),
            "action": self.action,
            "items": list(self.items),
            "target": self.target,
            "reason": self.reason,
            "source": self.source,
            "undone_at": self.undone_at.isoformat() if self.undone_at else None,
            "undo": None if self.undone_at else f"lore tidy undo {self.id}",
            "redo": f"lore tidy redo {self.id}" if self.undone_at else None,
        }


@dataclass(frozen=True)
class Report:
    space: str
    duplicates: list[Cluster]
    conflicts: list[Conflict]
    stale: list[Stale]
    expired: int  # current-belief facts whose valid_to passed (hidden already)
    facts: int  # current facts looked at
    notes: int  # current notes looked at (handoffs and tasks aside)
    usage_since: datetime | None  # the usage record's start (None: none yet)
    unused_checked: bool  # whether the record is old enough to call an item unused
    actions: list[Act] = field(default_factory=list)
    # named as likely the same, not folded (lore.core.naming): pairs of facts, the newer first
    maybe: list[Cluster] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.duplicates or self.conflicts or self.stale or self.maybe)

    def as_json(self) -> dict[str, Any]:
        return {
            "space": self.space,
            "facts": self.facts,
            "notes": self.notes,
            "duplicates": [c.as_json() for c in self.duplicates],
            "maybe_same": [c.as_json() for c in self.maybe],
            "conflicts": [c.as_json() for c in self.conflicts],
            "stale": [s.as_json() for s in self.stale],
            "expired": self.expired,
            "usage_since": self.usage_since.isoformat() if self.usage_since else None,
            "unused_checked": self.unused_checked,
            "actions": [a.as_json() for a in self.actions],
        }


def _text(item: Fact | Note) -> similarity.Text:
    if isinstance(item, Fact):
        return similarity.Text.of(item.statement, item.subject)
    return similarity.Text.of(f"{item.title or ''}\n{item.body}")


def _apart(ids: Iterable[str], kept: Sequence[frozenset[str]]) -> bool:
    """Whether a person or an agent already said to keep these items (all in one kept group)."""
    wanted = frozenset(ids)
    return any(wanted <= group for group in kept)


def build(
    space: str,
    facts: Sequence[Fact],
    notes: Sequence[Note],
    *,
    kept: Sequence[frozenset[str]] = (),
    superseded: Mapping[str, str] | None = None,
    gone: Callable[[Fact | Note], list[str]] | None = None,
    unused: Iterable[str] = (),
    expired: int = 0,
    usage_since: datetime | None = None,
    unused_checked: bool = False,
    actions: Sequence[Act] = (),
    meaning: Mapping[tuple[int, int], float] | None = None,
) -> Report:
    """The report for `space`: `facts` and `notes` current, newest first; `kept` the groups said to
    keep apart; `superseded` item -> the newer fact an agent said replaces it; `gone` the paths an
    item names that are gone (None: not checked); `unused` the ids neither shown nor returned for
    UNUSED_DAYS; `meaning` the cosine of pairs of facts near each other (by lineage)."""
    superseded = superseded or {}
    duplicates: list[Cluster] = []
    conflicts: list[Conflict] = []
    every: list[Fact | Note] = [*facts, *notes]
    for items, clash in ((list[Fact | Note](facts), True), (list[Fact | Note](notes), False)):
        groups = similarity.collapse(items, _text, conflicts=clash)
        for g in groups:
            cluster = (g.item, *g.similar)
            if len(cluster) > 1 and not _apart((x.id for x in cluster), kept):
                duplicates.append(Cluster(tuple(Entry.of(x) for x in cluster)))
            for newer in g.conflicts:
                older = g.item
                if superseded.get(older.id) == newer.id or _apart((newer.id, older.id), kept):
                    continue
                conflicts.append(Conflict(Entry.of(newer), Entry.of(older)))
    conflicts += _replaced(facts, conflicts, kept, superseded)
    maybe = _maybe(
        facts, meaning or {}, [*duplicates, *(Cluster((c.newer, c.older)) for c in conflicts)], kept
    )
    stale: list[Stale] = []
    spare = set(unused)
    for item in every:
        reasons = []
        if item.id in superseded:
            reasons.append(f"replaced by {superseded[item.id]} (an agent confirmed it)")
        missing = gone(item) if gone is not None else []
        if missing:
            shown = ", ".join(missing[:3]) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
            reasons.append(f"names {shown}, which {'is' if len(missing) == 1 else 'are'} gone")
        if item.id in spare:
            reasons.append(f"neither shown at a session start nor returned by a search in {UNUSED_DAYS} days")
        if reasons:
            stale.append(Stale(Entry.of(item), "; ".join(reasons)))
    return Report(
        space,
        duplicates,
        conflicts,
        stale,
        expired,
        len(facts),
        len(notes),
        usage_since,
        unused_checked,
        list(actions),
        maybe,
    )


def _maybe(
    facts: Sequence[Fact],
    meaning: Mapping[tuple[int, int], float],
    listed: Sequence[Cluster],
    kept: Sequence[frozenset[str]],
) -> list[Cluster]:
    """Pairs of facts named as likely the same (lore.core.naming.score) that no other list holds
    together and no one said to keep: the newer first, the most alike pairs first."""
    by_lineage = {f.lineage: f for f in facts}
    together = [frozenset(e.id for e in c.items) for c in listed]
    found: dict[frozenset[int], tuple[float, Fact, Fact]] = {}
    for (x, y), cos in meaning.items():
        a, b = by_lineage.get(x), by_lineage.get(y)
        if a is None or b is None or frozenset((x, y)) in found:
            continue
        newer, older = (a, b) if (a.stated, a.lineage) > (b.stated, b.lineage) else (b, a)
        pair = frozenset((newer.id, older.id))
        if any(pair <= group for group in together) or _apart(pair, kept):
            continue
        verdict = naming.classify(_text(newer), [older], _text, conflicts=True, meaning=_always(cos))
        if verdict.likely:
            found[frozenset((x, y))] = (naming.score(_text(newer), _text(older), cos), newer, older)
    ranked = sorted(found.values(), key=lambda t: (-t[0], t[1].lineage))
    return [Cluster((Entry.of(newer), Entry.of(older))) for _, newer, older in ranked]


def _always(value: float) -> Callable[[object], float]:
    return lambda _: value


def _replaced(
    facts: Sequence[Fact],
    listed: Sequence[Conflict],
    kept: Sequence[frozenset[str]],
    superseded: Mapping[str, str],
) -> list[Conflict]:
    """Older facts a change statement says it replaced (lore.core.naming.replaces) that the word
    rule did not list as conflicts: the newer (the change) first."""
    texts = {f.id: similarity.Text.of(f.statement, f.subject) for f in facts}
    pairs = {(c.newer.id, c.older.id) for c in listed} | {(c.older.id, c.newer.id) for c in listed}
    out = []
    for change in facts:
        if not texts[change.id].gone:
            continue
        for old in facts:
            if old.id == change.id or old.stated >= change.stated or (change.id, old.id) in pairs:
                continue
            if superseded.get(old.id) == change.id or _apart((change.id, old.id), kept):
                continue
            if naming.replaces(texts[change.id], texts[old.id]):
                out.append(Conflict(Entry.of(change), Entry.of(old)))
    return out


def _line(e: Entry) -> str:
    about = f" [{e.subject}]" if e.subject else "" if e.kind == "fact" else f" ({e.kind})"
    text = " ".join(e.text.split())
    if len(text) > 120:
        text = text[:119] + "…"
    return printable(f"  {e.id}{about} {text}  ({e.source}, {e.recorded_at:%Y-%m-%d})")


def text(report: Report) -> str:
    """The report for a person at a terminal, with the command for each act."""
    r = report
    out = [
        f"Space {r.space}: {render.counted(r.facts, 'current fact')}, {render.counted(r.notes, 'note')} "
        "(handoffs and tasks aside)."
    ]
    if r.clean:
        out.append("Nothing to tidy: no near duplicates, likely conflicts or stale items.")
    if r.duplicates:
        out += ["", f"Near duplicates ({len(r.duplicates)}): the first is the newest, kept by a merge."]
        for c in r.duplicates:
            out += [_line(e) for e in c.items]
            ids = " ".join(e.id for e in c.items)
            out.append(f"    merge: lore tidy merge {ids}   keep all: lore tidy keep {ids}")
    if r.maybe:
        out += [
            "",
            f"May say the same ({len(r.maybe)}): named, not folded; the newer first, kept by a merge.",
        ]
        for c in r.maybe:
            out += [_line(e) for e in c.items]
            ids = " ".join(e.id for e in c.items)
            out.append(f"    the same: lore tidy merge {ids}   not the same: lore tidy keep {ids}")
    if r.conflicts:
        out += ["", f"Likely conflicts ({len(r.conflicts)}): the newer first."]
        for k in r.conflicts:
            out += [_line(k.newer), _line(k.older)]
            ids = f"{k.newer.id} {k.older.id}"
            out.append(
                f"    merge into the newer: lore tidy merge {ids}   both hold: lore tidy keep {ids}   "
                f"the older is wrong: lore tidy forget {k.older.id}"
            )
    if r.stale:
        out += ["", f"Stale ({len(r.stale)}):"]
        for s in r.stale:
            out += [_line(s.entry), f"    {s.reason}: lore tidy forget {s.entry.id}"]
    if r.expired:
        out += [
            "",
            f"{render.counted(r.expired, 'fact')} stopped being true (valid_to passed): kept as history, "
            "hidden from session starts and recall.",
        ]
    if not r.unused_checked:
        since = f" since {r.usage_since:%Y-%m-%d}" if r.usage_since else " yet"
        out += [
            "",
            f"Unused items are not flagged: lore has recorded usage{since} (needs {UNUSED_DAYS} days).",
        ]
    if r.actions:
        out += ["", "Recent tidy actions (lore tidy undo ID; an undone one: lore tidy redo ID):"]
        out += [f"  {a.id}: {a.describe()}" for a in r.actions[:10]]
    return "\n".join(out)
