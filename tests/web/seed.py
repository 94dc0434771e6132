"""Memory written the way agents write it (the domain functions the MCP tools call), for the UI to show."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg

from lore.core.session import Origin
from lore.store import facts, graph, messages, notes, tasks, userconfig


@dataclass(frozen=True)
class Seeded:
    fact: str
    note: str
    linked: str
    task: str
    other_task: str


def seed(conn: psycopg.Connection, user: str, base: str) -> Seeded:
    work = Origin(f"{user}/work", "claude-code", f"{base}/work")
    home = Origin(f"{user}/home", "codex", f"{base}/home")
    fact = facts.remember(
        conn,
        work,
        f"{user}'s acme-api deploys with make ship",
        subject="work",
        valid_from=datetime(2026, 1, 5, tzinfo=UTC),
    )
    facts.remember(conn, work, "Staging database is refreshed every Monday night")
    facts.remember(conn, home, "Dotfiles live in ~/dotfiles and are linked with stow")
    note = notes.remember(
        conn,
        work,
        "Deploys go through make ship: it builds the image, runs the migrations and "
        "rolls the pods one by one. Roll back with make rollback.",
        kind="devenv",
        title="How we deploy",
        tags=["deploy", "ci"],
    )
    linked = notes.remember(
        conn,
        work,
        "Migrations must be backwards compatible for one release.",
        kind="decision",
        title="Migrations stay compatible",
    )
    rollbacks = notes.remember(
        conn, work, "Rollbacks keep the last three images.", kind="pattern", title="Rollbacks"
    )
    checklist = notes.remember(
        conn,
        work,
        "Before a release: changelog, tag, announce in #deploys.",
        kind="plan",
        title="Release checklist",
    )
    graph.link(conn, work, [work.space], note.lineage, "depends_on", linked.lineage)
    graph.link(conn, work, [work.space], rollbacks.lineage, "refines", note.lineage)
    graph.link(conn, work, [work.space], note.lineage, "relates_to", checklist.lineage)
    config = userconfig.load(conn, user).config
    task = tasks.file(
        conn, config, home, work.space, "Bump the base image", "Security fix in the base image."
    )
    other = tasks.file(conn, config, home, work.space, "Rewrite it in Rust", "Just because.")
    first = messages.send(conn, config, home, work.space, "Is the deploy freeze still on this week?")
    messages.send(conn, config, work, home.space, "Yes, until Friday.", reply_to=first.num)
    conn.commit()
    return Seeded(fact.id, note.id, linked.id, task.id, other.id)
