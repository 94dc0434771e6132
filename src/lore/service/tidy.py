"""Tidying a space (`lore tidy`, the web UI's Tidy page): what is duplicated, contradicted or stale
(lore.core.tidy groups it), and the acts that settle it, each recorded in the audit
(lore.store.tidy) and undoable: merge (a revision that keeps history; the others forgotten with the
reason "merged into f_N"), keep both, forget. Nothing is deleted without a person or an agent asking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from lore.core import admission, ids, stale, validate
from lore.core import tidy as core
from lore.core.errors import InvalidInput, NotFound, Refused
from lore.core.rows import Fact, Note
from lore.core.session import Who
from lore.service import memory, retrieval
from lore.service.runtime import Runtime
from lore.store import facts, injections, notes
from lore.store import tidy as audit

MAX_ITEMS = 50  # items one act may name


def _act(a: audit.Action) -> core.Act:
    return core.Act(a.id, a.at, a.action, tuple(a.items), a.target, a.reason, a.source, a.undone_at)


def report(rt: Runtime, space: str, *, here: str | None = None, check_paths: bool = True) -> core.Report:
    """What there is to tidy in `space` now. `here`: the caller's repository (a moved project's
    relative paths are looked up there too); `check_paths`: local mode only."""

    def load(conn: psycopg.Connection) -> core.Report:
        now = datetime.now(UTC)
        fs = facts.everything(conn, space)
        current = [f for f in fs if f.valid_to is None or f.valid_to > now]
        ns = notes.everything(conn, space)
        window = now - timedelta(days=core.UNUSED_DAYS)
        used, began = injections.used_since(conn, [space], window)
        checked = began is not None and began <= window
        every: list[Fact | Note] = [*current, *ns]
        unused = [x.id for x in every if checked and x.recorded_at < window and x.id not in used]

        def gone(item: Fact | Note) -> list[str]:
            text = item.statement if isinstance(item, Fact) else item.body
            return stale.gone(text, item.workspace, here)

        model = retrieval.retrieval(rt).runner.model
        return core.build(
            space,
            current,
            [n for n in ns if "instructions" not in n.tags],  # sections of files: the files decide
            kept=audit.kept_apart(conn, [space]),
            superseded=audit.superseded(conn, [space]),
            gone=gone if check_paths else None,
            unused=unused,
            expired=len(fs) - len(current),
            usage_since=began,
            unused_checked=checked,
            actions=[_act(a) for a in audit.recent(conn, [space])],
            meaning=facts.neighbours(conn, space, model) if model else None,
        )

    return rt.transact(load)


@dataclass(frozen=True)
class Done:
    """What an act did, said for a person (`text`) and recorded (`action`: the audit row's id)."""

    action: int
    text: str


def _items(values: Sequence[object], least: int) -> tuple[str, list[int]]:
    """Ids of one kind (all facts or all notes), each once, at least `least` of them."""
    parsed = [validate.item_id(v) for v in values]
    prefixes = {p for p, _ in parsed}
    if len(prefixes) > 1:
        raise InvalidInput("Give facts or notes, not both.", "Merge facts with facts and notes with notes.")
    lineages = list(dict.fromkeys(n for _, n in parsed))
    if len(lineages) < least:
        raise InvalidInput(
            f"Give at least {least} different ids.", "Example: lore tidy merge f_5 f_4 (keeps f_5)."
        )
    if len(lineages) > MAX_ITEMS:
        raise InvalidInput(f"At most {MAX_ITEMS} ids at once.", "Tidy in several steps.")
    return prefixes.pop(), lineages


ACTS = ("merge", "keep", "forget", "undo", "redo")


def fields(given: Mapping[str, Any]) -> dict[str, Any]:
    """A tidy act's fields besides its items, from what /api or the command line was sent."""
    return {key: given.get(key) for key in ("into", "reason", "statement", "action")}


def act(
    rt: Runtime,
    who: Who,
    name: str,
    *,
    items: Sequence[object] = (),
    into: object = None,
    reason: object = None,
    statement: object = None,
    action: object = None,
) -> Done | None:
    """One act of the Tidy page and `lore tidy` by its name (ACTS): merge `items` into `into`, keep or
    forget `items`, undo or redo `action`. None: no such act (each adapter says so in its terms)."""
    if name == "merge":
        return merge(rt, who, into, items, statement=statement)
    if name == "keep":
        return keep(rt, who, items)
    if name == "forget":
        return forget(rt, who, items, reason)
    if name in ("undo", "redo"):
        return (undo if name == "undo" else redo)(rt, who, action)
    return None


def merge(rt: Runtime, who: Who, into: object, others: Sequence[object], *, statement: object = None) -> Done:
    """Keep `into` (revised to `statement` when given: facts only), forget `others` with the reason
    "merged into <into>"; one audit row, undoable."""
    prefix, lineages = _items([into, *others], 2)
    target, rest = lineages[0], lineages[1:]
    text = validate.statement(statement) if statement is not None else None
    if text is not None and prefix != "f":
        raise InvalidInput(
            "--statement gives a fact its new text; notes are merged as they are.", "Leave it out."
        )
    kind = facts if prefix == "f" else notes
    public = ids.fact if prefix == "f" else ids.note

    def act(conn: psycopg.Connection) -> Done:
        with conn.transaction():
            keep = kind.VERSIONS.lock_current(conn, who.origin, who.readable, target, "Merge it")
            revised = None
            if text is not None and isinstance(keep, Fact) and text != keep.statement:
                _, new = memory.revise_in(conn, who, target, admission.FactCandidate(text))
                revised = new.version_id
            reason = f"merged into {keep.id}"
            for lineage in rest:
                kind.forget(conn, who.origin, who.readable, lineage, reason)
            gone = [public(x) for x in rest]
            row = audit.record(conn, who.origin, "merge", gone, target=keep.id, revised=revised)
        again = f" (revised to “{text}”)" if revised else ""
        return Done(
            row.id,
            f"Merged {', '.join(gone)} into {keep.id}{again}: {', '.join(gone)} forgotten with the reason "
            f"“{reason}”, kept in the history. Undo: lore tidy undo {row.id}",
        )

    return rt.transact(act)


def keep(rt: Runtime, who: Who, items: Sequence[object]) -> Done:
    """Say these items are all right as they are: tidy stops listing them together."""
    prefix, lineages = _items(items, 2)
    public = ids.fact if prefix == "f" else ids.note
    kind = facts if prefix == "f" else notes

    def act(conn: psycopg.Connection) -> Done:
        with conn.transaction():
            found = kind.current(conn, [who.origin.space], lineages)
            missing = [public(x) for x in lineages if x not in found]
            if missing:
                raise NotFound(
                    f"No current {', '.join(missing)} in space {who.origin.space}.", "`lore tidy` lists them."
                )
            named = [public(x) for x in lineages]
            row = audit.record(conn, who.origin, "keep", named)
        return Done(row.id, f"Kept {', '.join(named)} as they are. Undo: lore tidy undo {row.id}")

    return rt.transact(act)


def forget(rt: Runtime, who: Who, items: Sequence[object], reason: object = None) -> Done:
    """Forget stale items (the rows stay: history, forget log, audit)."""
    prefix, lineages = _items(items, 1)
    why = validate.text(reason or "stale (lore tidy)", "reason", max_chars=validate.MAX_REASON)
    assert why is not None
    kind = facts if prefix == "f" else notes
    public = ids.fact if prefix == "f" else ids.note

    def act(conn: psycopg.Connection) -> Done:
        with conn.transaction():
            for lineage in lineages:
                kind.forget(conn, who.origin, who.readable, lineage, why)
            named = [public(x) for x in lineages]
            row = audit.record(conn, who.origin, "forget", named, reason=why)
        return Done(row.id, f"Forgot {', '.join(named)} ({why}). Undo: lore tidy undo {row.id}")

    return rt.transact(act)


def undo(rt: Runtime, who: Who, action_id: object) -> Done:
    """Take an act back: a merge's and a forget's items believed again (a merge's revision reverted
    when nothing changed the fact since), a "keep" or a "supersede" no longer standing."""
    number = _action_id(action_id)

    def act(conn: psycopg.Connection) -> Done:
        with conn.transaction():
            row = audit.get(conn, [who.origin.space], number, lock=True)
            if row.undone_at is not None:
                raise Refused(
                    f"Tidy action {number} was undone already.", "`lore tidy` lists the recent ones."
                )
            said = []
            if row.action in ("merge", "forget"):
                for item in row.items:
                    prefix, lineage = validate.item_id(item)
                    (facts if prefix == "f" else notes).restore(conn, who.origin, who.readable, lineage)
                    said.append(f"{item} is current again")
            if row.action == "merge" and row.revised is not None and row.target:
                said.append(_revert(conn, who, row.target, row.revised))
            if row.action in ("keep", "supersede"):
                said.append(f"{', '.join(row.items)} {'are' if len(row.items) > 1 else 'is'} listed again")
            audit.undo(conn, number, who.origin.source)
        return Done(number, f"Undid tidy action {number}: {'; '.join(said)}.")

    done = rt.transact(act)
    retrieval.poke(rt)  # a restored note is embedded again
    return done


def redo(rt: Runtime, who: Who, action_id: object) -> Done:
    """Do an undone act again, as a new act of the audit (the undone one stays as it was): a merge's
    and a forget's items forgotten again (a merge's target given the merged statement again when
    nothing changed it since the undo), a "keep" or a "supersede" standing again."""
    number = _action_id(action_id)

    def act(conn: psycopg.Connection) -> Done:
        with conn.transaction():
            row = audit.get(conn, [who.origin.space], number, lock=True)
            if row.undone_at is None:
                raise Refused(f"Tidy action {number} stands: nothing to redo.", "Undo it first.")
            said: list[str] = []
            items = list(row.items)
            revised = None
            if row.action == "merge" and row.revised is not None and row.target:
                revised, line = _reapply(conn, who, row.target, row.revised)
                said.append(line)
            if row.action in ("merge", "forget"):
                reason = f"merged into {row.target}" if row.action == "merge" else row.reason or "stale"
                items = [x for x in items if _forget_again(conn, who, x, reason, said)]
                if not items:
                    raise Refused(f"Nothing of tidy action {number} is current to act on again.", "")
            again = audit.record(
                conn, who.origin, row.action, items, target=row.target, reason=row.reason, revised=revised
            )
        head = f"Redid tidy action {number} as {again.id}: {_act(again).describe()}"
        return Done(again.id, f"{head}{''.join(f'; {s}' for s in said)}. Undo: lore tidy undo {again.id}")

    return rt.transact(act)


def _forget_again(conn: psycopg.Connection, who: Who, item: str, reason: str, said: list[str]) -> bool:
    prefix, lineage = validate.item_id(item)
    kind = facts if prefix == "f" else notes
    if not kind.current(conn, [who.origin.space], [lineage]):
        said.append(f"{item} is not current: left as it is")
        return False
    kind.forget(conn, who.origin, who.readable, lineage, reason)
    return True


def _reapply(conn: psycopg.Connection, who: Who, target: str, revised: int) -> tuple[int | None, str]:
    """A merge's revision of `target` made again after its undo, unless the fact changed since the
    undo reverted it (then it stays, and the answer says so): (the new version, what was done)."""
    _, lineage = validate.item_id(target, expect="f")
    versions = facts.history(conn, who.readable, lineage)
    merged = next((v for v in versions if v.version_id == revised), None)
    after = [v for v in versions if v.version_id > revised]
    if merged is None or len(after) != 1 or after[0].superseded_at is not None:
        return None, f"{target} changed since: its statement stays as it is"
    change = admission.FactCandidate(merged.statement)
    _, new = memory.revise_in(conn, who, lineage, change, stated_at=merged.stated)
    return new.version_id, f"{target} says “{merged.statement}” again"


def _revert(conn: psycopg.Connection, who: Who, target: str, revised: int) -> str:
    """A merge's revision of `target` undone: the version before it written again, unless the fact
    changed since (then it stays, and the answer says so)."""
    _, lineage = validate.item_id(target, expect="f")
    versions = facts.history(conn, who.readable, lineage)
    current = versions[-1] if versions and versions[-1].superseded_at is None else None
    if current is None or current.version_id != revised:
        return f"{target} changed since the merge: its statement stays as it is"
    before = next((v for v in reversed(versions) if v.version_id < revised), None)
    if before is None:
        return f"{target} keeps its statement"
    memory.revise_in(conn, who, lineage, admission.FactCandidate(before.statement), stated_at=before.stated)
    return f"{target} says “{before.statement}” again"


def _action_id(value: object) -> int:
    text = str(value).strip()
    if not text.isdigit() or len(text) > 18:
        raise InvalidInput(f"{text[:40]!r} is not a tidy action id.", "`lore tidy` lists them (a number).")
    return int(text)


@dataclass(frozen=True)
class Merged:
    """An item merged into another: the act and every version of the item."""

    action: core.Act
    item: str
    versions: list[Fact] | list[Note]


def merged_into(rt: Runtime, readable: Sequence[str], item_id: object) -> list[Merged]:
    """The items merged into `item_id` (not undone), each with its history: what a fact's history
    shows below its own versions."""
    prefix, lineage = validate.item_id(item_id)
    name = ids.fact(lineage) if prefix == "f" else ids.note(lineage)

    def load(conn: psycopg.Connection) -> list[Merged]:
        out = []
        for a in audit.about(conn, readable, name):
            if a.action != "merge" or a.target != name or a.undone_at is not None:
                continue
            for item in a.items:
                p, n = validate.item_id(item)
                versions = facts.history(conn, readable, n) if p == "f" else notes.history(conn, readable, n)
                out.append(Merged(_act(a), item, versions))
        return out

    return rt.transact(load)
