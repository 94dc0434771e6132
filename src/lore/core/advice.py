"""What to do about what lore found, said once and rendered in the caller's terms (docs/design.md,
Duplicates and conflicts): an agent through MCP reads tool calls with their arguments, a person at a
terminal reads `lore` commands, a person in the web UI reads its buttons and pages. One function per
act, each with its three renderings side by side, and the write's answer (`remembered`) built from
them for every caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from lore.core import naming
from lore.core.render import quoted
from lore.core.rows import Fact, Note

Caller = Literal["tool", "cli", "web"]
TOOL: Caller = "tool"
CLI: Caller = "cli"
WEB: Caller = "web"


def caller_of(value: object) -> Caller:
    """The caller a request names (`/api`'s `caller`, for `lore` commands on a client); else a tool's."""
    return CLI if value == "cli" else WEB if value == "web" else TOOL


def _shell(text: str) -> str:
    """`text` as one shell word in double quotes (the characters the shell reads there escaped)."""
    escaped = "".join("\\" + c if c in '"\\$`' else c for c in text)
    return f'"{escaped}"'


def _said(caller: Caller, tool: str, cli: str, web: str) -> str:
    """One act in the caller's terms: a tool call, a `lore` command, the web UI's button."""
    return tool if caller == TOOL else cli if caller == CLI else web


def forget(item: str, reason: str, caller: Caller) -> str:
    tool = f'forget(id="{item}", reason="{reason}")'
    return _said(
        caller,
        tool,
        f"lore tidy forget {item} --reason {_shell(reason)}",
        f"“Forget {item}” on {item}'s page (why: {reason})",
    )


def revise(item: str, caller: Caller) -> str:
    tool = f'revise_fact(id="{item}", statement=...)'
    return _said(
        caller, tool, f"lore facts revise {item} STATEMENT", f"“Save a new version” on {item}'s page"
    )


def edit_note(item: str, caller: Caller) -> str:
    return _said(caller, f"edit {item}", f"edit {item}", f"edit {item} on its page")


def supersede(new: Fact, olds: Sequence[str], caller: Caller) -> str:
    """Confirm that `new` replaces `olds`: the same statement again with `supersedes` (nothing new
    is written); the web UI has no such form, so there it is a merge on the Tidy page."""
    ids = ",".join(olds)
    about = f" --subject {_shell(new.subject)}" if new.subject else ""
    tool = f'remember_fact again with supersedes="{ids}" (the same statement: nothing new is written)'
    cli = f"lore facts add {_shell(new.statement)}{about} --supersedes {ids}"
    return _said(caller, tool, cli, f"“Merge into the chosen one” on the Tidy page with {new.id} chosen")


def keep(ids: Sequence[str], caller: Caller) -> str:
    joined = " ".join(ids)
    tool = f"nothing (a person can say so with `lore tidy keep {joined}`)"
    return _said(caller, tool, f"lore tidy keep {joined}", "“Keep all” on the Tidy page")


def merge(into: str, others: Sequence[str], caller: Caller) -> str:
    joined = " ".join(others)
    web = f"“Merge into the chosen one” on the Tidy page with {into} chosen"
    return _said(
        caller, f"`lore tidy merge {into} {joined}` merges them", f"lore tidy merge {into} {joined}", web
    )


def undo(action: int, caller: Caller) -> str:
    return _said(
        caller, f"lore tidy undo {action}", f"lore tidy undo {action}", f"“Undo” beside act {action} below"
    )


def _listed(items: Sequence[Fact | Note]) -> str:
    shown = "; ".join(quoted(x) for x in items[: naming.NAMED_MAX])
    return shown + (f" (+{len(items) - naming.NAMED_MAX} more)" if len(items) > naming.NAMED_MAX else "")


def remembered(
    item: Fact | Note,
    *,
    duplicate: bool = False,
    similar: Sequence[Fact | Note] = (),
    conflicts: Sequence[Fact] = (),
    superseded: Sequence[Fact] = (),
    likely: Sequence[Fact | Note] = (),
    replaces: Sequence[Fact] = (),
    caller: Caller = TOOL,
) -> str:
    """What remember_fact / remember_note answer (and the CLI, /api and the web UI say, each in its
    own terms): the id written, or the copy that made it unnecessary; the near duplicates, likely
    restatements, facts it may replace and likely conflicts found, quoted, best first, with the act
    that settles each. The model in the session (or the person) decides."""
    new = item.id
    is_fact = isinstance(item, Fact)
    kind = "" if is_fact else f" ({item.kind})"  # type: ignore[union-attr]
    if duplicate:
        same = "statement" if is_fact else "text"
        lines = [
            f"Already remembered as {new}{kind} in space {item.space} (the same {same}): nothing written."
        ]
        if is_fact:
            lines.append(f"To change it: {revise(new, caller)}.")
        return "\n".join([*lines, *_noted(new, superseded, caller)])
    lines = [f"Remembered {new}{kind} in space {item.space}."]
    if similar:
        first = similar[0].id
        better = revise(first, caller) if is_fact else edit_note(first, caller)
        lines.append(
            f"Similar: {_listed(similar)} — if {new} says the same, {forget(new, f'same as {first}', caller)}"
            f" and next time {better} instead; {merge(first, [new], caller)}."
        )
    if likely:
        first = likely[0].id
        lines.append(
            f"May say the same as: {_listed(likely)} — if it does, {forget(new, f'same as {first}', caller)} "
            f"(or {revise(first, caller)} to say it better); if not, nothing to do."
        )
    if replaces and isinstance(item, Fact):
        ids = [x.id for x in replaces[: naming.NAMED_MAX]]
        lines.append(
            f"May replace: {_listed(replaces)} — if it does, confirm: {supersede(item, ids, caller)}; "
            f"until then session starts mark {', '.join(ids)} “superseded?”. If both hold: "
            f"{keep([new, *ids], caller)}."
        )
    if conflicts and isinstance(item, Fact):
        first = conflicts[0].id
        lines.append(
            f"Likely conflict: {_listed(conflicts)} — if {new} replaces it, confirm: "
            f"{supersede(item, [first], caller)}; if {first} is still right, "
            f"{forget(new, f'{first} is right', caller)}; if both hold, {keep([new, first], caller)}."
        )
    return "\n".join([*lines, *_noted(new, superseded, caller)])


def _noted(new: str, superseded: Sequence[Fact], caller: Caller) -> list[str]:
    """The facts an agent just said `new` replaces."""
    if not superseded:
        return []
    names = ", ".join(x.id for x in superseded)
    return [
        f"Noted: {new} replaces {names}; session starts leave {names} out (kept in history and "
        f"search; {merge(new, [x.id for x in superseded], caller)})."
    ]


# A hint written in tool terms, for a person at a terminal: each tool and argument as the `lore`
# command that does the same (errors raised below the adapters speak of tools).
_CLI_TERMS = (
    ("Call recall_facts to see", "`lore facts list` shows"),
    ("recall_facts", "`lore facts list`"),
    ("Call search_notes to find", "`lore search` finds"),
    ("search_notes", "`lore search`"),
    ("read_messages", "`lore messages read`"),
    ("revise_fact", "`lore facts revise`"),
    ("remember_fact", "`lore facts add`"),
    ("wait_seconds", "--wait"),
    ('supersedes="f_4"', "--supersedes f_4"),
)


def for_cli(hint: str) -> str:
    """`hint` with the tools it names put as `lore` commands."""
    for tool, command in _CLI_TERMS:
        hint = hint.replace(tool, command)
    return hint
