"""The "Last session here" block a session start leads with, and a handoff in full for a person
(`lore handoff`): which agent, how long ago, the final message's first lines, the working tree, the
tasks in doing (docs/design.md, Handoffs). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from lore.core.inert import printable
from lore.core.measure import size
from lore.core.rows import Handoff

# The "Last session here" block (docs/design.md, Handoffs): at most this much of the budget, the
# final message's first lines, each cut to a line's width.
HANDOFF_MAX_CHARS = 700
HANDOFF_LINES = 3
HANDOFF_LINE_CHARS = 160
HANDOFF_DOING = 3


@dataclass(frozen=True)
class LastSession:
    """The last handoff here, as of `now` (the database's clock), and the space's tasks in `doing`
    (lineage, title; newest first) with how many there are."""

    handoff: Handoff
    now: datetime
    doing: Sequence[tuple[int, str | None]] = ()
    doing_total: int = 0


def ago(then: datetime, now: datetime) -> str:
    """`just now`, `12 min ago`, `3 h ago`, `2 days ago`."""
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 48 * 3600:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


def ago_changes(then: datetime, now: datetime) -> datetime:
    """When `ago(then, now)` next says something else (a text that shows it is right until then)."""
    seconds = max(0.0, (now - then).total_seconds())
    step = 60 if seconds < 3600 else 3600 if seconds < 48 * 3600 else 86400
    if seconds < 60:
        return then + timedelta(seconds=60)
    return then + timedelta(seconds=(int(seconds // step) + 1) * step)


def _quoted(message: str | None) -> tuple[list[str], bool]:
    """The message's first HANDOFF_LINES non-empty lines as `> ` lines, and whether more was left
    out. Text that would open or close lore's fence is defused."""
    if not message:
        return [], False
    lines = [" ".join(line.split()) for line in message.splitlines()]
    lines = [line for line in lines if line]
    shown = [
        line if len(line) <= HANDOFF_LINE_CHARS else line[: HANDOFF_LINE_CHARS - 1] + "…" for line in lines
    ]
    more = len(lines) > HANDOFF_LINES or any(len(x) > HANDOFF_LINE_CHARS for x in lines[:HANDOFF_LINES])
    return [f"> {line}" for line in shown[:HANDOFF_LINES]], more


def changes_line(changed: int, changes: Sequence[str], diffstat: str | None) -> str:
    """`4 changed files (1 file changed, 2 insertions(+); 3 untracked)`: git's diff
    summary counts tracked files only, so the untracked ones (`??` in the status lines) are said."""
    if not changed:
        return "no uncommitted changes"
    head = f"{changed} changed {'file' if changed == 1 else 'files'}"
    summary = diffstat.splitlines()[-1].strip() if diffstat else ""
    parts = [summary] if "changed" in summary else []
    untracked = sum(1 for line in changes if line.startswith("??"))
    if untracked:
        parts.append(f"{'at least ' if changed > len(changes) else ''}{untracked} untracked")
    return f"{head} ({'; '.join(parts)})" if parts else head


def _state_line(last: LastSession) -> str | None:
    """`3 changed files (3 files changed, 10 insertions(+)). Doing: n_12 Fix login (+1 more).`"""
    h, parts = last.handoff, []
    if h.changes is not None:
        parts.append(changes_line(h.changed, h.changes, h.diffstat))
    if last.doing:
        named = "; ".join(
            f"n_{lineage} {' '.join((t or '').split())[:60]}".rstrip() for lineage, t in last.doing
        )
        extra = last.doing_total - len(last.doing)
        parts.append(f"Doing: {named}" + (f" (+{extra} more)" if extra > 0 else ""))
    return ". ".join(parts) + "." if parts else None


def last_session_lines(last: LastSession, max_chars: int) -> list[str]:
    """The "Last session here" block within `max_chars` (lines joined by newlines, counted in
    UTF-16): which agent, how long ago, the final message's first lines, the changed files and the
    tasks in doing. What gives way first: the later message lines, then the state line, then the
    first message line; a budget too small for the heading gives no block at all."""
    h = last.handoff
    where = f" (handoff {h.note_id})" if h.note_id else ""
    head = f"Last session here: {h.client}, {ago(h.updated_at, last.now)}{where}."
    quotes, more = _quoted(h.message)
    state = [line] if (line := _state_line(last)) else []

    def quoted(n: int) -> list[str]:
        shown = quotes[:n]
        if shown and (more or n < len(quotes)):
            shown[-1] += " …"
        return shown

    candidates = [[head, *quoted(n), *state] for n in range(len(quotes), 0, -1)]
    candidates += [[head, *quoted(1)]] if quotes else []
    candidates += [[head, *state], [head]]
    for lines in candidates:
        if sum(size(line) + 1 for line in lines) - 1 <= max_chars:
            return lines
    return []


def handoff_text(
    handoff: Handoff, now: datetime, tasks: dict[int, tuple[str, str]], *, max_age_hours: int | None = None
) -> str:
    """A handoff in full, for a person (`lore handoff`): who, when, the final message, the working
    tree at that moment, the tasks it touched (`tasks`: lineage -> (status, title) as they are now)."""
    h = handoff
    ended, began = h.updated_at.astimezone(UTC), h.started_at.astimezone(UTC)
    lines = [
        f"Last session in {h.workspace_name} (space {h.space}): {h.client}, {ago(ended, now)} "
        f"({ended:%Y-%m-%d %H:%M} UTC)",
        f"  session {h.session_id}, started {began:%Y-%m-%d %H:%M} UTC, in {h.workspace}",
        f"  last event {h.event} ({h.events} in all); the note {h.note_id or '(none)'} is what search finds",
    ]
    if max_age_hours == 0:
        lines.append("  session starts show no handoff (session_start.handoff_max_age_hours = 0)")
    elif max_age_hours is not None and (now - ended).total_seconds() > max_age_hours * 3600:
        lines.append(f"  older than {max_age_hours} h: session starts no longer show it")
    lines += ["", "Final message:"]
    if h.message:
        lines += [f"  {line}" for line in h.message.splitlines()]
        if h.message_chars > len(h.message):
            lines.append(f"  ({h.message_chars:,} characters before it was cut)")
    else:
        lines.append("  (none: the client's event carried no message and no transcript was read)")
    lines.append("")
    if h.changes is None:
        lines.append("Working tree: not a git repository (or git did not answer in time).")
    elif not h.changed:
        lines.append("Working tree: no uncommitted changes.")
    else:
        lines.append(f"Working tree at that moment: {changes_line(h.changed, h.changes, h.diffstat)}")
        lines += [f"  {line}" for line in h.changes]
        if h.changed > len(h.changes):
            lines.append(f"  ... {h.changed - len(h.changes)} more")
        lines += [f"  {line}" for line in (h.diffstat or "").splitlines()]
    if h.tasks:
        lines += ["", "Tasks touched:"]
        for lineage in h.tasks:
            status, title = tasks.get(lineage, ("gone", ""))
            lines.append(f"  n_{lineage} [{status}] {title}".rstrip())
    return printable("\n".join(lines))  # a terminal: no escape sequence of a stored message runs
