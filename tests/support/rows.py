"""lore's rows (lore.rows) with the fields a pure test does not care about filled in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from lore.core.rows import Fact, Message, Note, Task

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def fact(
    lineage: int,
    statement: str,
    subject: str | None = None,
    *,
    source: str = "claude-code",
    valid_from: datetime = T0,
    valid_to: datetime | None = None,
    recorded_at: datetime | None = None,
    superseded_at: datetime | None = None,
    space: str = "s",
) -> Fact:
    """A fact recorded `lineage` minutes after T0 unless `recorded_at` says otherwise."""
    recorded = recorded_at if recorded_at is not None else T0 + timedelta(minutes=lineage)
    return Fact(
        lineage=lineage,
        version_id=lineage,
        space=space,
        recorded_at=recorded,
        superseded_at=superseded_at,
        source=source,
        workspace=None,
        statement=statement,
        subject=subject,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def note(
    lineage: int,
    body: str,
    title: str | None = None,
    kind: str = "note",
    *,
    tags: list[str] | None = None,
    recorded_at: datetime | None = None,
    space: str = "s",
) -> Note:
    """A note recorded `lineage` minutes after T0 unless `recorded_at` says otherwise."""
    return Note(
        lineage=lineage,
        version_id=lineage,
        space=space,
        recorded_at=recorded_at if recorded_at is not None else T0 + timedelta(minutes=lineage),
        superseded_at=None,
        source="claude-code",
        workspace=None,
        kind=kind,
        title=title,
        body=body,
        tags=tags or [],
    )


def message(
    num: int,
    from_space: str,
    source: str,
    body: str,
    reply_to: int | None,
    sent_at: datetime,
    *,
    to: str = "alpha",
) -> Message:
    return Message(
        num=num,
        to_space=to,
        from_space=from_space,
        body=body,
        reply_to=reply_to,
        thread=reply_to or num,
        source=source,
        workspace=None,
        from_session=None,
        sent_at=sent_at,
        read_at=None,
        read_by=None,
    )


def task(lineage: int, status: str, title: str | None, body: str, space: str, from_space: str) -> Task:
    return Task(
        lineage=lineage,
        space=space,
        status=status,
        title=title,
        body=body,
        from_space=from_space,
        from_source="test",
        from_workspace=None,
        filed_at=T0,
        updated_at=T0,
    )
