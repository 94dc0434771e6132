"""Cross-validated tuning for bench/locomo.py: lore's ranking replayed offline with other settings.

The parameters of lore's search that were chosen on this LoCoMo split (src/lore/store/search.py,
src/lore/embeddings/__init__.py, docs/decisions.md "Retrieval"):
- KEYWORD_WEIGHT 0.5, the fusion weight ("flat between 0.45 and 0.55"): tuned on R@5, cross-validated;
- DEPTH 50, the span each list is cut to and min-max normalised over ("top 50"): tuned, cross-validated;
- min_similarity 0.3 (MiniLM), the cosine a vector-only hit needs: set from LoCoMo's gold memories
  (their 10th percentile was 0.34); cross-validated by re-running that rule on the training
  conversations (10th percentile of the gold memories' cosine, rounded down to 0.05);
- RELATIVE_FLOOR 0.3 (a hit needs 0.3 x the best score) and KEYWORD_POOL 600 (keyword rows ranked
  per search, a cost bound checked on LoCoMo): both only ever remove results, so choosing them on
  recall would always pick "off"; they stay fixed, and the bench reports what they cost in-sample.

`search_notes` cannot take another weight, so the sweep runs here: each question's keyword and vector
candidates are fetched once with lore's own query functions (`lore.search.keyword_candidates`,
`vector_candidates`, the same SQL as the tool), then `lore.fusion.fuse` and `threshold` rank them for
each setting. The default configuration's figures still come from the real `search_notes` calls;
the replay of the default is checked against them (same top 10).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from lore.core import ranking as fusion
from lore.core import when
from lore.core.ranking import Candidate
from lore.store import search

# The grid (round 3: narrowed to where every earlier choice fell, weight 0.5-0.6 and depth 50-100,
# to leave room for the date bonus and the second model's weight on 2 cores)
WEIGHTS = tuple(round(0.05 * i, 2) for i in range(6, 15))  # 0.30 .. 0.70
DEPTHS = (30, 50, 75, 100)
BONUSES = (0.0, 0.25, 0.5, 0.75, 1.0)  # the date bonus (lore.core.ranking.DATE_BONUS)
SECOND_WEIGHTS = (0.0, 0.1, 0.2, 0.3)  # the second model's share (lore.core.ranking.SECOND_WEIGHT)
UNBOUNDED_POOL = 1_000_000
LIMIT = 10  # what the bench asks search_notes for
TRAIN = 3  # conversations to tune on; the other two are held out


@dataclass(frozen=True)
class Setting:
    weight: float = fusion.KEYWORD_WEIGHT
    depth: int = fusion.DEPTH
    min_similarity: float = 0.3
    relative: float = fusion.RELATIVE_FLOOR
    pool: int = fusion.KEYWORD_POOL
    bonus: float = fusion.DATE_BONUS
    second_weight: float = fusion.SECOND_WEIGHT
    second_min: float = 1.0  # the second model's floor (its own min_similarity)

    def label(self) -> str:
        return (
            f"w {self.weight:.2f}, depth {self.depth}, min_sim {self.min_similarity:.2f}, "
            f"date bonus {self.bonus:.2f}, second model {self.second_weight:.2f}"
        )


@dataclass
class Candidates:
    """One question's candidate lists, fetched once."""

    keyword: dict[int, list[Candidate]]  # per keyword pool, top max(DEPTHS) by ts_rank
    vector: dict[int, list[Candidate]]  # per depth (the HNSW walk depends on it)
    gold_similarity: list[float]  # cosine of the question to each of its gold memories
    then: set[int] = field(default_factory=set)  # candidates from the period the question names
    second: dict[int, list[Candidate]] = field(default_factory=dict)  # the second model's, per depth


def collect(
    spaces: Sequence[Any], url: str, runner: Any, model: str, pools: Iterable[int], second: Any = None
) -> dict[str, list[Candidates]]:
    """Per space, per question (in order): candidates as `search_notes` fetches them. `spaces` are
    locomo.Space with `note_ids` filled; the query vector is made one query at a time, as the server
    makes it (`Runner.query`)."""
    from lore.db.connect import connect
    from lore.embeddings import to_pgvector

    out: dict[str, list[Candidates]] = {}
    with connect(url, autocommit=True) as conn:
        for space in spaces:
            lineage = {mid: int(nid.rsplit("_", 1)[1]) for nid, mid in space.note_ids.items()}
            rows = out[space.name] = []
            for q in space.questions:
                vector = runner.query(q.text)
                assert vector is not None, "the embedder did not answer"
                forms = search.parse(conn, q.text)[0]
                keyword = {
                    pool: search.keyword_candidates(
                        conn, [space.name], forms, model=model, depth=max(DEPTHS), pool=pool
                    )
                    for pool in pools
                }
                nearest = {}
                for depth in DEPTHS:  # its ef_search setting is transaction-local, as in lore.runtime.run
                    with conn.transaction():
                        nearest[depth] = search.vector_candidates(
                            conn, [space.name], vector, model=model, depth=depth
                        )
                gold = conn.execute(
                    "SELECT 1 - (embedding <=> %s::vector) FROM notes "
                    "WHERE space = %s AND superseded_at IS NULL AND lineage = ANY(%s)",
                    (to_pgvector(vector), space.name, [lineage[m] for m in q.gold]),
                ).fetchall()
                others: dict[int, list[Candidate]] = {}
                other_vector = second.query(q.text) if second is not None else None
                if other_vector is not None:
                    for depth in DEPTHS:
                        with conn.transaction():
                            others[depth] = search.vector_candidates(
                                conn, [space.name], other_vector, model=second.model, depth=depth, second=True
                            )
                named = when.period(q.text, datetime.now(UTC))
                groups = (*keyword.values(), *nearest.values(), *others.values())
                seen = {c.lineage for group in groups for c in group}
                then = search.happened_in(conn, sorted(seen), named) if named and seen else set()
                rows.append(Candidates(keyword, nearest, [float(s) for (s,) in gold], then, others))
    return out


def ranking(c: Candidates, s: Setting) -> list[int]:
    """lore.store.search.search's ranking (no rejections, no links in this bench) under setting `s`."""
    fused = fusion.fuse(
        c.keyword[s.pool],
        c.vector[s.depth],
        weight=s.weight,
        depth=s.depth,
        min_similarity=s.min_similarity,
        second=c.second.get(s.depth, []) if s.second_weight else [],
        second_weight=s.second_weight,
        second_min=s.second_min,
    )
    if c.then:
        fused = fusion.favour(fused, c.then, s.bonus)
    kept = fusion.threshold(
        fused, min_similarity=s.min_similarity, relative=s.relative, second_min=s.second_min
    )
    return [r.lineage for r in kept[:LIMIT]]


def rotations(convs: Sequence[str]) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every split into TRAIN conversations to tune on and the rest to score: C(5, 3) = 10."""
    out = []
    for train in itertools.combinations(sorted(convs), TRAIN):
        out.append((train, tuple(c for c in sorted(convs) if c not in train)))
    return out


def floor_rule(similarities: Sequence[float]) -> float:
    """How min_similarity was set: the gold memories' 10th-percentile cosine, rounded down to 0.05."""
    ordered = sorted(similarities)
    p10 = ordered[max(0, math.ceil(0.1 * len(ordered)) - 1)]
    return math.floor(p10 * 20 + 1e-9) / 20


def grid(base: Setting, second: bool = False) -> list[Setting]:
    """Every setting tried (`second`: with the second model's weight too; else it is 0)."""
    seconds = SECOND_WEIGHTS if second else (0.0,)
    return [
        replace(base, weight=w, depth=d, bonus=b, second_weight=x)
        for w in WEIGHTS
        for d in DEPTHS
        for b in BONUSES
        for x in seconds
    ]


def best(settings: Sequence[Setting], objective: Callable[[Setting], float], default: Setting) -> Setting:
    """The setting with the highest objective; ties go to the one nearest the default."""

    def key(s: Setting) -> tuple[float, float, float, float, float]:
        return (
            objective(s),
            -abs(s.weight - default.weight),
            -abs(s.depth - default.depth),
            -abs(s.bonus - default.bonus),
            -abs(s.second_weight - default.second_weight),
        )

    return max(settings, key=key)


def lineage_map(note_ids: Mapping[str, str]) -> dict[int, str]:
    """lore note id ("n_12") -> memory id, keyed by lineage."""
    return {int(nid.rsplit("_", 1)[1]): mid for nid, mid in note_ids.items()}
