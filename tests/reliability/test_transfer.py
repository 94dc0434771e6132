"""Export / import: lossless between two databases (a property test over random histories), idempotent,
all or nothing on a damaged file, and references that follow renumbered ids."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from psycopg import sql
from support import handoffs as written_handoffs

from lore.core import capture, secrets
from lore.core.admission import FactCandidate
from lore.core.config import parse_config
from lore.core.errors import InvalidInput, LoreError
from lore.core.session import Acting, Origin
from lore.db import migrate
from lore.service import memory
from lore.store import facts, graph, messages, notes, purge, search, tasks, transfer

SPACES = ("alpha", "beta")
CONFIG = parse_config(
    '[[space]]\nid = "alpha"\naccepts_from = ["beta"]\n\n[[space]]\nid = "beta"\naccepts_from = ["alpha"]\n',
    Path("/dev/null/config.toml"),
)


def _truncate(conn: psycopg.Connection) -> None:
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'schema_migrations'"
        )
    ]
    conn.execute(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY CASCADE")
    for (seq,) in conn.execute(
        "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
    ).fetchall():
        conn.execute(f"ALTER SEQUENCE {seq} RESTART")
    conn.commit()


@pytest.fixture(scope="module")
def second_db(db_url: str) -> Iterator[str]:
    """A second database on the test server: the other side of every round trip."""
    name = "lore_roundtrip"
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    url = db_url.replace("/lore?", f"/{name}?")
    with psycopg.connect(url) as c:
        migrate.upgrade(c)
    yield url
    with psycopg.connect(db_url, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def two(db_url: str, second_db: str) -> Iterator[tuple[psycopg.Connection, psycopg.Connection]]:
    with psycopg.connect(db_url) as a, psycopg.connect(second_db) as b:
        yield a, b


# --- a random history, written through the domain modules ------------------------------------------

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"),
    min_size=1,
    max_size=30,
).filter(lambda s: bool(s.strip()) and not secrets.scan(s))
_SPACE = st.sampled_from(SPACES)
_INDEX = st.integers(min_value=0, max_value=40)
_DAYS = st.none() | st.integers(min_value=1, max_value=90)  # valid_to, days after valid_from
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("fact"), _SPACE, _TEXT, st.none() | _TEXT, st.integers(-5, 5), _DAYS),
        st.tuples(st.just("revise"), _INDEX, _TEXT, st.none() | _TEXT, _DAYS),
        st.tuples(st.just("forget_fact"), _INDEX, _TEXT),
        st.tuples(
            st.just("note"),
            _SPACE,
            _TEXT,
            st.sampled_from(("note", "tech", "task")),
            st.lists(_TEXT, max_size=3),
        ),
        st.tuples(st.just("embed"), _INDEX, st.lists(st.floats(-1, 1, width=32), min_size=4, max_size=4)),
        st.tuples(st.just("forget_note"), _INDEX, _TEXT),
        st.tuples(st.just("link"), _INDEX, _INDEX, st.sampled_from(graph.RELATIONS)),
        st.tuples(st.just("irrelevant"), _INDEX, _TEXT),
        st.tuples(st.just("task"), _SPACE, _SPACE, _TEXT, _TEXT),
        st.tuples(
            st.just("update"),
            _INDEX,
            st.sampled_from(("todo", "doing", "blocked", "done")),
            st.none() | _TEXT,
        ),
        st.tuples(st.just("send"), _SPACE, _SPACE, _TEXT, st.none() | _INDEX),
        st.tuples(st.just("read"), _SPACE),
        st.tuples(st.just("purge"), st.sampled_from("fnm"), _INDEX),
    ),
    max_size=30,
)


def apply(conn: psycopg.Connection, ops: list[tuple[Any, ...]]) -> None:
    """Run the operations; those that the domain refuses (a conflict, a missing id) are skipped.

    Each op is a tuple drawn from OPS: its first item says the kind, the others have that kind's types
    (checked by the domain functions), hence `Any`."""
    fact_ids: list[int] = []
    note_ids: list[tuple[int, str]] = []
    task_ids: list[tuple[int, str]] = []
    message_ids: list[tuple[int, str, str]] = []
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def origin(space: str) -> Origin:
        return Origin(space, "prop-test", f"/w/{space}")

    def pick(items: list[Any], i: object) -> Any:
        assert isinstance(i, int)
        return items[i % len(items)] if items else None

    for op in ops:
        kind = op[0]
        try:
            if kind == "fact":
                _, space, text, subject, days, length = op
                start = t0 + timedelta(days=int(days))
                end = start + timedelta(days=int(length)) if length is not None else None
                row = facts.remember(
                    conn, origin(space), text, subject=subject, valid_from=start, valid_to=end
                )
                fact_ids.append(row.lineage)
            elif kind == "revise" and fact_ids:
                lineage = pick(fact_ids, op[1])
                found = conn.execute(
                    "SELECT space, valid_from FROM facts WHERE lineage = %s LIMIT 1", (lineage,)
                ).fetchone()
                if found is None:  # purged since: nothing left to revise
                    continue
                end = found[1] + timedelta(days=int(op[4])) if op[4] is not None else None
                change = FactCandidate(op[2], op[3], valid_to=end)
                memory.revise_in(conn, Acting(origin(found[0]), SPACES), lineage, change)
            elif kind == "forget_fact" and fact_ids:
                lineage = pick(fact_ids, op[1])
                space = conn.execute(
                    "SELECT space FROM facts WHERE lineage = %s LIMIT 1", (lineage,)
                ).fetchone()
                if space is None:  # purged since
                    continue
                facts.forget(conn, origin(space[0]), SPACES, lineage, op[2])
            elif kind == "note":
                _, space, body, note_kind, tags = op
                row_n = notes.remember(conn, origin(space), body, kind=note_kind, tags=tags)
                note_ids.append((row_n.lineage, row_n.space))
            elif kind == "embed" and note_ids:
                lineage, _ = pick(note_ids, op[1])
                vector = "[" + ",".join(repr(x) for x in op[2]) + "]"
                conn.execute(
                    "UPDATE notes SET embedding = %s::vector, embedding_model = 'fake-4' "
                    "WHERE lineage = %s AND superseded_at IS NULL",
                    (vector, lineage),
                )
                conn.commit()
            elif kind == "forget_note" and note_ids:
                lineage, space = pick(note_ids, op[1])
                notes.forget(conn, origin(space), SPACES, lineage, op[2])
            elif kind == "link" and note_ids:
                (a, space), (b, _) = pick(note_ids, op[1]), pick(note_ids, op[2])
                graph.link(conn, origin(space), SPACES, a, op[3], b)
            elif kind == "irrelevant" and note_ids:
                lineage, space = pick(note_ids, op[1])
                search.mark_irrelevant(conn, origin(space), SPACES, lineage, op[2], vector=None, model=None)
            elif kind == "task":
                _, space, target, title, body = op
                task = tasks.file(conn, CONFIG, origin(space), target, title, body)
                task_ids.append((task.lineage, task.space))
            elif kind == "update" and task_ids:
                lineage, space = pick(task_ids, op[1])
                tasks.update(conn, origin(space), SPACES, lineage, op[2], op[3])
            elif kind == "send":
                _, space, to, body, reply = op
                replied = pick(message_ids, reply) if reply is not None else None
                if replied is not None:
                    num, sender, target = replied
                    sent = messages.send(conn, CONFIG, origin(target), sender, body, reply_to=num)
                else:
                    sent = messages.send(conn, CONFIG, origin(space), to, body, session="s1")
                message_ids.append((sent.num, sent.from_space, sent.to_space))
            elif kind == "read":
                messages.read(conn, op[1], "prop-reader", limit=3)
            elif kind == "purge":
                pools = {
                    "f": [f"f_{x}" for x in fact_ids],
                    "n": [f"n_{x}" for x, _ in note_ids],
                    "m": [f"m_{x}" for x, _, _ in message_ids],
                }
                item = pick(pools[op[1]], op[2])
                if item is not None:
                    purge.purge(conn, item, "tester")
        except LoreError:
            conn.rollback()
    conn.commit()


def _rows(conn: psycopg.Connection) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table but schema_migrations, read with plain SQL (not through lore.transfer),
    sorted: what a lossless round trip must reproduce, column for column. The keyword side's term
    counts are folded first (lore_compact_terms): unfolded, the same counts can stand as other rows."""
    conn.execute("SELECT lore_compact_terms()")
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            # memory_changes is the writes' trace for the memory stamp (migration 0023), not memory:
            # an import writes it its own way
            "AND tablename NOT IN ('schema_migrations', 'memory_changes') ORDER BY tablename"
        )
    ]
    snapshot = {
        t: sorted(conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(t))).fetchall(), key=repr)
        for t in tables
    }
    conn.commit()
    return snapshot


def _export(conn: psycopg.Connection, space: str | None = None) -> list[str]:
    lines = list(transfer.export(conn, space))
    conn.commit()
    return lines[1:]  # the header carries the export time


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=OPS)
@example(
    ops=[
        ("fact", "alpha", "deploys with make ship", "acme-api", 3, 30),
        ("revise", 0, "deploys with make release", "acme-web", 45),
        ("note", "beta", "a note", "tech", ["ops"]),
        ("forget_note", 0, "obsolete"),
    ]
)
def test_round_trip_is_lossless_and_idempotent(
    two: tuple[psycopg.Connection, psycopg.Connection], ops: list[tuple[object, ...]]
) -> None:
    a, b = two
    _truncate(a)
    _truncate(b)
    apply(a, ops)
    exported = list(transfer.export(a))
    a.commit()
    source = _rows(a)
    first = transfer.load(b, exported)
    b.commit()
    assert not first.renumbered
    # compared with the source's rows read by SQL, not with a second export (which would share any
    # column the export drops)
    assert _rows(b) == source
    assert _export(b) == exported[1:]
    again = transfer.load(b, exported)  # the same file twice: nothing new
    b.commit()
    assert not again.inserted and not again.renumbered
    assert _rows(b) == source
    # the target keeps working: new ids never collide with imported ones
    fresh = facts.remember(b, Origin("alpha", "t", None), "written after the import")
    fresh_note = notes.remember(b, Origin("alpha", "t", None), "note written after the import")
    assert fresh.lineage > max(
        [0, *(int(x["row"]["lineage"]) for x in map(json.loads, exported[1:-1]) if x["table"] == "facts")]
    )
    assert fresh_note.version_id > 0


def test_round_trip_keeps_every_column_literally(two: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    """A small history whose every value is known here: after export and import, SQL on the target finds
    exactly these values (subject, valid_to, closed versions, audit, task state, thread)."""
    a, b = two
    _truncate(a)
    _truncate(b)

    def day(m: int, d: int) -> datetime:
        return datetime(2026, m, d, tzinfo=UTC)

    alpha, beta = Origin("alpha", "codex", "/w/a"), Origin("beta", "claude-code", "/w/b")
    fact = facts.remember(
        a, alpha, "deploys with make ship", subject="acme-api", valid_from=day(1, 5), valid_to=day(6, 30)
    )
    change = FactCandidate("deploys with make release", "acme-web", valid_to=day(9, 1))
    memory.revise_in(a, Acting(alpha, SPACES), fact.lineage, change)
    note = notes.remember(
        a, beta, "cache for 10 minutes", kind="decision", title="Caching", tags=["perf", "ops"]
    )
    notes.forget(a, beta, SPACES, note.lineage, "obsolete")
    task = tasks.file(a, CONFIG, beta, "alpha", "Fix CI", "red since Monday")
    tasks.update(a, alpha, SPACES, task.lineage, "doing", "on it")
    asked = messages.send(a, CONFIG, beta, "alpha", "which port?", session="s-b")
    messages.send(a, CONFIG, alpha, "beta", "8765", reply_to=asked.num)
    a.commit()
    exported = list(transfer.export(a))
    a.commit()
    transfer.load(b, exported)
    b.commit()
    assert b.execute(
        "SELECT lineage, version_id, space, statement, subject, valid_from, valid_to, source, workspace, "
        "superseded_at IS NULL FROM facts ORDER BY version_id"
    ).fetchall() == [
        (1, 1, "alpha", "deploys with make ship", "acme-api", day(1, 5), day(6, 30), "codex", "/w/a", False),
        (1, 2, "alpha", "deploys with make release", "acme-web", day(1, 5), day(9, 1), "codex", "/w/a", True),
    ]
    assert b.execute(
        "SELECT lineage, version_id, space, kind, title, body, tags, source, workspace, "
        "superseded_at IS NULL FROM notes ORDER BY version_id"
    ).fetchall() == [
        (
            1,
            1,
            "beta",
            "decision",
            "Caching",
            "cache for 10 minutes",
            ["perf", "ops"],
            "claude-code",
            "/w/b",
            False,
        ),
        (2, 2, "alpha", "task", "Fix CI", "red since Monday", [], "claude-code", "/w/b", True),
    ]
    assert b.execute(
        "SELECT space, item_kind, lineage, reason, source, workspace FROM forget_log"
    ).fetchall() == [("beta", "note", 1, "obsolete", "claude-code", "/w/b")]
    assert b.execute(
        "SELECT lineage, space, status, from_space, from_source, from_workspace FROM tasks"
    ).fetchall() == [(2, "alpha", "doing", "beta", "claude-code", "/w/b")]
    assert b.execute(
        "SELECT lineage, status, note, space, source FROM task_events ORDER BY id"
    ).fetchall() == [
        (2, "inbox", None, "beta", "claude-code"),
        (2, "doing", "on it", "alpha", "codex"),
    ]
    assert b.execute(
        "SELECT id, to_space, from_space, body, reply_to, thread, source, workspace, from_session "
        "FROM messages ORDER BY id"
    ).fetchall() == [
        (1, "alpha", "beta", "which port?", None, 1, "claude-code", "/w/b", "s-b"),
        (2, "beta", "alpha", "8765", 1, 1, "codex", "/w/a", None),
    ]
    # the times are the source's, to the microsecond
    times = (
        "SELECT recorded_at, superseded_at FROM facts UNION ALL SELECT recorded_at, superseded_at FROM notes"
    )
    assert sorted(b.execute(times).fetchall()) == sorted(a.execute(times).fetchall())


def test_space_export_holds_only_that_space(two: tuple[psycopg.Connection, psycopg.Connection]) -> None:
    a, b = two
    _truncate(a)
    _truncate(b)
    apply(
        a,
        [
            ("fact", "alpha", "alpha fact", None, 0, None),
            ("fact", "beta", "beta fact", None, 0, None),
            ("send", "alpha", "beta", "hello beta", None),
            ("note", "beta", "beta note", "note", []),
        ],
    )
    lines = _export(a, "beta")
    statements = [json.loads(x)["row"].get("statement") for x in lines[:-1]]
    assert "beta fact" in statements and "alpha fact" not in statements
    assert any(json.loads(x)["table"] == "messages" for x in lines[:-1])  # to beta: both sides keep it
    transfer.load(b, ['{"lore_export": 1}', *lines])
    assert b.execute("SELECT count(*) FROM facts").fetchone() == (1,)


def test_import_into_a_used_database_renumbers_and_follows_references(
    two: tuple[psycopg.Connection, psycopg.Connection],
) -> None:
    a, b = two
    _truncate(a)
    _truncate(b)
    apply(
        a,
        [
            ("note", "alpha", "deploy guide", "note", ["ops"]),
            ("note", "alpha", "rollback guide", "note", []),
            ("link", 1, 0, "refines"),
            ("task", "beta", "alpha", "review guide", "please"),
            ("update", 0, "doing", "on it"),
            ("fact", "alpha", "A fact", None, 0, None),
            ("revise", 0, "A fact v2", None, None),
            ("send", "alpha", "beta", "question", None),
            ("send", "beta", "alpha", "answer", 0),
        ],
    )
    apply(
        b,
        [
            ("note", "alpha", "something else in B", "note", []),
            ("fact", "alpha", "B's own", None, 0, None),
            ("send", "beta", "alpha", "B's message", None),
        ],
    )
    exported = list(transfer.export(a))
    a.commit()
    report = transfer.load(b, exported)
    assert report.renumbered["notes"] == 1 and report.renumbered["facts"] == 1
    assert report.renumbered["messages"] >= 1
    edge = b.execute(
        "SELECT f.body, e.relation, t.body FROM edges e JOIN notes f ON f.lineage = e.from_note "
        "JOIN notes t ON t.lineage = e.to_note"
    ).fetchall()
    assert edge == [("rollback guide", "refines", "deploy guide")]
    task = b.execute(
        "SELECT n.title, t.status, (SELECT count(*) FROM task_events e WHERE e.lineage = t.lineage) "
        "FROM tasks t JOIN notes n ON n.lineage = t.lineage"
    ).fetchall()
    assert task == [("review guide", "doing", 2)]
    versions = b.execute(
        "SELECT statement, superseded_at IS NULL FROM facts WHERE lineage = "
        "(SELECT lineage FROM facts WHERE statement = 'A fact') ORDER BY version_id"
    ).fetchall()
    assert versions == [("A fact", False), ("A fact v2", True)]
    reply = b.execute(
        "SELECT r.body, p.body, r.thread = p.thread FROM messages r JOIN messages p ON p.id = r.reply_to"
    ).fetchall()
    assert reply == [("answer", "question", True)]
    assert transfer.load(b, exported).inserted == {}  # and once more: nothing new


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda lines: lines[:-1], "ends early"),
        (lambda lines: [*lines[:3], "{not json", *lines[3:]], "Line 4"),
        (lambda lines: [*lines[:2], '{"table": "passwords", "row": {}}', *lines[2:]], "unknown line"),
        (lambda lines: lines[1:], "no lore export header"),
        (lambda lines: [*lines[:-1], '{"end": true, "rows": 1}'], "counts 1 rows"),
        (lambda lines: [lines[0], lines[1].replace('"space"', '"spice"'), *lines[2:]], "no column 'spice'"),
        (lambda lines: [lines[0], lines[1].replace('"alpha"', '"not a valid space!"'), *lines[2:]], "failed"),
    ],
)
def test_a_damaged_file_imports_nothing(
    two: tuple[psycopg.Connection, psycopg.Connection],
    damage: Callable[[list[str]], list[str]],
    message: str,
) -> None:
    a, b = two
    _truncate(a)
    _truncate(b)
    apply(
        a,
        [
            ("fact", "alpha", "one", None, 0, None),
            ("fact", "alpha", "two", None, 0, None),
            ("note", "alpha", "n", "note", []),
        ],
    )
    lines = list(transfer.export(a))
    a.commit()
    with pytest.raises(InvalidInput, match=message):
        transfer.load(b, damage(lines))
    b.rollback()
    assert b.execute("SELECT (SELECT count(*) FROM facts) + (SELECT count(*) FROM notes)").fetchone() == (0,)


def test_handoffs_travel_with_their_note_and_tasks(
    two: tuple[psycopg.Connection, psycopg.Connection],
) -> None:
    """A handoff (what an agent session left) is memory too: exported, imported once, its note and
    the tasks it touched pointing at the imported notes, even when they were renumbered."""
    a, b = two
    _truncate(a)
    _truncate(b)
    beta = Origin("beta", "claude-code", "/w/b")
    notes.remember(b, beta, "already here: takes n_1 in the target")  # so the import renumbers
    b.commit()
    task = tasks.file(a, CONFIG, Origin("alpha", "codex", "/w/a"), "alpha", "Fix CI", "red since Monday")
    tasks.update(a, Origin("alpha", "codex", "/w/a"), SPACES, task.lineage, "doing")
    left = capture.Handoff(
        space="alpha",
        client="codex",
        session_id="s-1",
        root="/w/a",
        workspace="/w/a",
        workspace_name="a",
        event="Stop",
        message="Fixed the flaky test; CI is green again.",
        message_chars=41,
        changes=capture.Changes([" M ci.yml"], 1, " 1 file changed, 2 insertions(+)"),
        started_at=None,
    )
    recorded = written_handoffs.record(a, left)
    a.execute("UPDATE handoffs SET tasks = %s WHERE id = %s", ([task.lineage], recorded.id))
    a.commit()
    exported = list(transfer.export(a))
    a.commit()
    for _ in range(2):  # the second import finds it there: nothing doubled
        transfer.load(b, exported)
        b.commit()
    rows = b.execute(
        "SELECT space, client, session_id, message, changed, note, tasks FROM handoffs"
    ).fetchall()
    assert len(rows) == 1, rows
    space, client, session, message, changed, note, touched = rows[0]
    assert (space, client, session, message, changed) == ("alpha", "codex", "s-1", left.message, 1)
    assert b.execute(
        "SELECT kind FROM notes WHERE lineage = %s AND superseded_at IS NULL", (note,)
    ).fetchone() == ("handoff",)
    assert b.execute("SELECT title FROM notes WHERE lineage = %s", (touched[0],)).fetchone() == ("Fix CI",)
