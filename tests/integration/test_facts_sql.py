"""The SQL of facts.page agrees with the pure predicates of timeline.py on a random history."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from lore.core import admission
from lore.core.errors import NotFound
from lore.core.session import Acting, Origin
from lore.core.timeline import When, visible
from lore.service.memory import revise_in
from lore.store import facts


def test_sql_time_travel_matches_pure_predicates(conn: psycopg.Connection) -> None:
    rng = random.Random(7)
    origin = Origin("s", "test", "/w")
    base = datetime(2026, 1, 1, tzinfo=UTC)
    lineages = []
    for i in range(30):
        start = base + timedelta(days=rng.randint(0, 300))
        end = start + timedelta(days=rng.randint(1, 200)) if rng.random() < 0.4 else None
        lineages.append(facts.remember(conn, origin, f"fact {i}", valid_from=start, valid_to=end).lineage)
    forgotten: list[int] = []
    done = {"forget": 0, "revise": 0, "refused": 0}
    for _ in range(40):
        if forgotten and rng.random() < 0.1:
            # the one refusal expected here: a forgotten fact has no current version to change
            gone = rng.choice(forgotten)
            with pytest.raises(NotFound) as refused:
                revise_in(conn, Acting(origin, ("s",)), gone, admission.FactCandidate("too late"))
            assert refused.value.message == f"f_{gone} was forgotten or replaced."
            conn.rollback()
            done["refused"] += 1
            continue
        lineage = rng.choice(lineages)
        if rng.random() < 0.15:
            facts.forget(conn, origin, ["s"], lineage, "random")
            lineages.remove(lineage)
            forgotten.append(lineage)
            done["forget"] += 1
        else:
            change = admission.FactCandidate(f"revised {rng.random():.6f}")
            revise_in(conn, Acting(origin, ("s",)), lineage, change)
            done["revise"] += 1
    conn.commit()
    # every operation did what it was asked (nothing swallowed); the seed exercises all three
    assert sum(done.values()) == 40 and all(done.values()), done
    versions = conn.execute(
        "SELECT count(*), count(*) FILTER (WHERE superseded_at IS NULL) FROM facts"
    ).fetchone()
    assert versions == (30 + done["revise"], 30 - done["forget"])
    history = conn.execute(
        "SELECT min(recorded_at), max(coalesce(superseded_at, recorded_at)) FROM facts"
    ).fetchone()
    assert history is not None
    all_rows = [v for lin in range(1, 31) for v in facts.history(conn, ["s"], lin)]
    now = datetime.now(UTC)
    span = (history[1] - history[0]) or timedelta(microseconds=1)
    probes = [history[0] + span * k / 10 for k in range(11)] + [None]
    for as_of in probes:
        for valid in [None, base + timedelta(days=50), base + timedelta(days=250)]:
            when = When(as_of, valid)
            rows, total = facts.page(conn, ["s"], when)
            got = {f.version_id for f in rows}
            expected = {f.version_id for f in all_rows if visible(f, when, now)}
            assert got == expected, (as_of, valid)
            assert total == len(expected)


def test_a_fact_stops_being_valid_at_exactly_its_valid_to(conn: psycopg.Connection) -> None:
    """Valid time is half-open, [valid_from, valid_to): at the instant valid_to a fact no longer
    holds, one microsecond before it still does, from valid_from on it does. Trust round 4: turning the
    shared predicate's `valid_to > ...` into `>=` passed every semantic test; this one reads the
    boundary through every path of facts.page (current belief, belief at a time) and the count."""
    origin = Origin("s", "test", "/w")
    start = datetime(2026, 3, 1, 12, tzinfo=UTC)
    end = start + timedelta(days=10)
    fact = facts.remember(conn, origin, "the canary runs on 5 % of traffic", valid_from=start, valid_to=end)
    conn.commit()
    tick = timedelta(microseconds=1)
    now = datetime.now(UTC)
    for as_of in (None, now):
        for moment, expected in ((start - tick, 0), (start, 1), (end - tick, 1), (end, 0), (end + tick, 0)):
            found, total = facts.page(conn, ["s"], When(as_of=as_of, valid_at=moment))
            wanted = ([fact.lineage] * expected, expected)
            assert ([f.lineage for f in found], total) == wanted, (as_of, moment)
            assert visible(fact, When(as_of=as_of, valid_at=moment), now) is bool(expected)
