"""The write-time check (docs/design.md, Duplicates and conflicts): what a new fact is compared with,
for lore.service.memory. The candidates are the current facts of the space that share
the most words with it and, when the write's own vector arrives in time, those nearest it in meaning;
lore.core.admission judges them. The vector is made while the write's transaction runs (the embedder's
write lane) and stored with the fact; a write whose vector is late is written without it and judged
by words, and the embedding worker fills it in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import psycopg

from lore.core import naming
from lore.core.rows import Fact
from lore.service.retrieval import retrieval
from lore.service.runtime import Runtime
from lore.store import facts
from lore.store.facts import Vector

ALIKE = 20  # current facts sharing the most words with the new one
NEAR = 10  # ... and nearest it in meaning
# How long a write waits for its own vector (`LORE_WRITE_EMBED_TIMEOUT`, seconds): long enough for the
# first write of a process to load the local model (~0.5 s), short enough that a stuck embedder costs
# one write this much once (its lane then stays busy and later writes do not wait at all).
WRITE_WAIT_S = 2.0

Wait = Callable[[float], list[float] | None]


def begin(rt: Runtime, statement: str) -> tuple[Wait, str | None]:
    """Start embedding a new fact's statement: (wait for it, the model)."""
    runner = retrieval(rt).runner
    return runner.soon(statement), runner.model


def _write_wait(rt: Runtime) -> float:
    try:
        return min(
            float(rt.env.get("LORE_WRITE_EMBED_TIMEOUT", WRITE_WAIT_S)), retrieval(rt).runner.query_timeout
        )
    except ValueError:
        return WRITE_WAIT_S


@dataclass(frozen=True)
class Neighbours:
    """What a new fact is compared with: the current facts of its space most like it, its cosine with
    those of them that have a vector of its model (by version id), and its own vector, when it came
    in time (stored with it)."""

    olds: list[Fact] = field(default_factory=list)
    cosines: dict[int, float] = field(default_factory=dict)
    vector: Vector | None = None


def neighbours(
    conn: psycopg.Connection,
    rt: Runtime,
    space: str,
    statement: str,
    vector: tuple[Wait, str | None] | None,
) -> Neighbours:
    """The neighbours of a new fact of `space` (lore.core.admission gives the verdict)."""
    olds = facts.alike(conn, space, statement, limit=ALIKE)
    made: list[float] | None = None
    model = None
    if vector is not None:
        wait, model = vector
        made = wait(_write_wait(rt))
    if made is None or model is None:
        return Neighbours(olds)
    cosines: dict[int, float] = {}
    seen = {f.version_id for f in olds}
    for fact, cos in facts.near(conn, space, made, model, limit=NEAR):
        cosines[fact.version_id] = cos
        if fact.version_id not in seen:
            olds.append(fact)
    rest = [f.version_id for f in olds if f.version_id not in cosines]
    for version, other in facts.vectors(conn, rest, model).items():
        cosines[version] = naming.cosine(made, other)
    return Neighbours(olds, cosines, (model, made))
