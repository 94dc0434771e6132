"""The structured result of every tool: one TypedDict each, declared as the tool's return type
(`Annotated[CallToolResult, Shape]`). The SDK derives each tool's `outputSchema` from it (compacted
for tools/list by lore.mcp.schema) and checks every structured result against it before it leaves the
server; a client can check it again against the schema it was given.

`typing_extensions.TypedDict`, not `typing`'s: pydantic needs it below Python 3.12 for the nested ones.
A key that may be missing is `NotRequired`; a value that may be null says `| None`.
"""

from __future__ import annotations

from typing import NotRequired

from typing_extensions import TypedDict


class FactStored(TypedDict):
    id: str  # the new fact, or the current one it repeats (`duplicate`)
    space: str
    duplicate: NotRequired[bool]  # the same words as a current fact: nothing was written
    similar: NotRequired[list[str]]  # near duplicates (revise one of them instead?)
    conflicts: NotRequired[list[str]]  # likely conflicts (revise, or confirm with `supersedes`)
    superseded: NotRequired[list[str]]  # what `supersedes` marked replaced
    likely: NotRequired[list[str]]  # named as likely the same (not folded): forget the new one if so
    replaces: NotRequired[list[str]]  # facts it may replace: confirm with `supersedes` if so


class NoteStored(TypedDict):
    id: str
    kind: str
    space: str
    duplicate: NotRequired[bool]
    similar: NotRequired[list[str]]  # (notes have no subject: no conflicts, nothing superseded)


class Recalled(TypedDict):
    space: str
    total: int  # facts that matched
    shown: int  # those the text holds (the budget may cut)
    ids: list[str]


class Found(TypedDict):
    id: str
    kind: str
    title: NotRequired[str]
    snippet: str
    score: float
    why: str  # keyword | semantic | linked
    via: NotRequired[str]  # linked hits: the edge that brought it
    when: NotRequired[str]  # when it happened (YYYY-MM-DD), when not the day it was written


class Searched(TypedDict):
    results: list[Found]


class Revised(TypedDict):
    id: str
    version: int


class Forgotten(TypedDict):
    id: str


class Linked(TypedDict):
    edge: str
    created: bool  # false: the same edge already existed


class MarkedIrrelevant(TypedDict):
    id: str
    query: str


class TaskFiled(TypedDict):
    id: str
    space: str
    status: str


class TaskMoved(TypedDict):
    id: str
    status: str
    previous: str


# `from` is a Python keyword: the functional form.
Message = TypedDict(
    "Message",
    {
        "id": str,
        "from": str,
        "to": str,
        "source": str,
        "reply_to": str | None,
        "sent_at": str,
        "body": str,
    },
)


class Sent(TypedDict):
    id: str
    to: str
    reply: NotRequired[Message | None]  # only when it waited: the reply, or null when none came


class TaskLine(TypedDict):
    id: str
    status: str
    title: str | None


class Inbox(TypedDict):
    messages: list[Message]
    unread_left: int
    tasks: list[TaskLine]
    open_tasks: int
