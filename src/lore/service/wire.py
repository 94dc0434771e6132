"""The JSON of the use cases' answers, one shape for both sides of the wire: `/api` sends it, and the
command line prints from it, whether its gateway called the use case in this process or asked a
server for it (lore.cli.gateway). A row becomes its fields (timestamps as ISO text) plus its public id;
`lore.core.rows.from_json` reads one back. No SQL, no I/O: shapes only."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from lore.core import tidy as tidied
from lore.core.injection import Injection, Usage
from lore.core.rows import Message, Task
from lore.core.session import SessionContext

if TYPE_CHECKING:
    from lore.core import advice
    from lore.service.memory import Recalled, Remembered
    from lore.service.search import Explanation
    from lore.service.tidy import Done
    from lore.service.work import Inbox, Sent


def row(value: Any) -> dict[str, Any]:
    """A row dataclass as JSON: every field (datetimes as ISO text, tuples as lists), and its public
    id (`f_3`, `n_7`, `m_2`) first when it has one."""
    out: dict[str, Any] = {}
    if isinstance(getattr(value, "id", None), str):
        out["id"] = value.id
    for f in dataclasses.fields(value):
        out[f.name] = plain(getattr(value, f.name))
    return out


def plain(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return row(value)
    return value


def recalled(found: Recalled, space: str, usage: Mapping[str, Usage] | None = None) -> dict[str, Any]:
    """What recall answers (`GET /api/facts`, `lore facts list`), from lore.service.memory.recall's
    answer."""
    out = {
        "space": space,
        "total": found.total,
        "workspace_name": found.workspace_name,
        "header": found.header,
        "facts": [row(f) for f in found.facts],
    }
    if usage is not None:
        out["usage"] = {item: row(used) for item, used in usage.items()}
    return out


def explanation(found: Explanation, space: str) -> dict[str, Any]:
    """What a search answers with its reasons (`GET /api/search`, `lore search`): the hits (their
    empty fields left out), the threshold, every candidate with its fate, the other spaces' notes."""
    return {
        "space": space,
        "results": [{k: v for k, v in row(h).items() if v is not None} for h in found.hits],
        "floor": found.floor,
        "min_similarity": found.min_similarity,
        "candidates": [row(r) for r in found.rows],
        "other_spaces": [{"id": i, "space": s} for i, s in found.other_spaces],
    }


def injection(record: Injection, named: Mapping[int, str]) -> dict[str, Any]:
    """A record of `lore log`; its handoff by the handoff's public id (`n_N`, its note's)."""
    handoff = named.get(record.handoff) if record.handoff else None
    return row(record) | {
        "handoff": handoff,
        "cut": record.budget_cut,
        "folded": [list(x) for x in record.folded],
    }


def remembered(done: Remembered[Any], kind: str, caller: advice.Caller) -> dict[str, Any]:
    """What a write answers (`POST /api/facts`, `/api/notes`; `lore facts add`, `lore notes add`):
    the item under `kind` (`fact`, `note`), the answer's text in the caller's words, the ids of what
    the write-time check named (as the MCP tools give them), and whether it was a copy (nothing
    written)."""
    return {
        kind: row(done.item),
        "message": done.text(caller),
        **done.structured(),
        "duplicate": done.duplicate,
    }


def history(versions: Sequence[Any], merged_items: Sequence[Any]) -> dict[str, Any]:
    """Every version of a fact, oldest first, and what was merged into it (`lore facts history`)."""
    return {"id": versions[0].id, "versions": [row(v) for v in versions], "merged": merged(merged_items)}


def records(spaces: Sequence[str], listed: Sequence[Injection], named: Mapping[int, str]) -> dict[str, Any]:
    """`lore log`'s records, newest first, and the spaces they were read from."""
    return {"spaces": list(spaces), "records": [injection(r, named) for r in listed]}


def handoff(where: SessionContext, text: str | None) -> dict[str, Any]:
    """`lore handoff`: the last session here, and where the command ran."""
    return {**session(where), "text": text}


def tidied_act(done: Done) -> dict[str, Any]:
    """What a tidy act answers (`lore tidy merge|keep|forget|undo|redo`)."""
    return {"action": done.action, "text": done.text}


def task(found: Task, events: Sequence[Any] = ()) -> dict[str, Any]:
    return {"task": row(found), "events": [row(e) for e in events]}


def tasks(space: str, listed: Sequence[Task], total: int) -> dict[str, Any]:
    """A space's tasks as a person's list shows them (`lore tasks`), and how many there are."""
    return {"space": space, "total": total, "tasks": [row(t) for t in listed]}


def updated(before: str, found: Task) -> dict[str, Any]:
    """A task's new status, and the one it had (`lore tasks update`)."""
    return {"before": before, **task(found)}


def messages(listed: Sequence[Message]) -> list[dict[str, Any]]:
    return [row(m) for m in listed]


def message_list(space: str, listed: Sequence[Message]) -> dict[str, Any]:
    """The latest messages to and from a space (`lore messages`: none marked read)."""
    return {"space": space, "messages": messages(listed)}


def inbox(space: str, got: Inbox) -> dict[str, Any]:
    """What reading the messages claimed (`lore messages read`), with the space's open tasks."""
    return {
        "space": space,
        "messages": messages(got.messages),
        "unread_left": got.unread_left,
        "tasks": [row(t) for t in got.tasks],
        "open_tasks": got.open_tasks,
    }


def sent(done: Sent) -> dict[str, Any]:
    """A message sent, how long it waited for a reply, and the reply (`lore messages send`)."""
    return {
        "message": row(done.message),
        "waited": done.waited,
        "reply": row(done.reply) if done.reply is not None else None,
    }


def session(where: SessionContext) -> dict[str, Any]:
    """Where a command ran: the workspace, its space and why (what `lore which` prints)."""
    return {
        "workspace": str(where.signal.path),
        "space": where.space,
        "reason": where.resolved.reason,
        "rule": where.resolved.rule,
        "workspace_name": where.workspace_name,
        "readable": list(where.readable),
        "root": str(where.root),
    }


def tidy_report(report: tidied.Report) -> dict[str, Any]:
    """`lore tidy`'s list: the report as JSON, and as a person reads it."""
    return {"report": report.as_json(), "text": tidied.text(report)}


def merged(items: Sequence[Any]) -> list[dict[str, Any]]:
    """What was merged into a fact (lore.service.tidy.Merged): the act, the item, its versions."""
    return [
        {
            "item": m.item,
            "action": {"id": m.action.id, "text": m.action.describe()},
            "versions": [row(v) for v in m.versions],
        }
        for m in items
    ]
