"""Candidate changes to lore's ranking, each scored like the headline: its parameters chosen on 3
conversations, scored on the other 2, over all 10 splits (bench/locomo.py, "Candidates").

Each candidate re-ranks the candidates lore's own SQL fetched once per question (bench/locomo_cv.py),
so what it would change in `lore.search` is measured before anything is built:
- RRF: reciprocal-rank fusion instead of min-max score fusion (k, and the keyword list's weight);
- query-dependent weight: one fusion weight for short questions, another for long ones; or by how
  many rows matched the keyword query (few matches = rare words = trust the keywords more);
- BM25 keyword side: Okapi BM25 (rank_bm25, over the space's memories) instead of ts_rank;
- BM25 + pseudo-relevance feedback: the question plus the rarest words of the first fused results;
- session date: a bonus for memories from a session whose date has the month/year the question names
  (LoCoMo asks "what did X do in July 2023?"; lore's notes have no "when it happened" field today).
"""

from __future__ import annotations

import collections
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lore.core import ranking
from lore.core.ranking import Candidate, Scored
from lore.core.when import MONTHS

MIN_SIMILARITY = 0.3  # MiniLM's, as in the default setting
WEIGHTS = tuple(round(0.05 * i, 2) for i in range(4, 17))  # 0.20 .. 0.80

Ranker = Callable[[Any, int, Any, Any], list[int]]  # (space, question index, Candidates, param)


@dataclass
class Change:
    name: str
    grid: list[Any]
    rank: Ranker


def _words(text: str, stop: set[str]) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if w not in stop]


def _cut(scored: Sequence[Scored]) -> list[int]:
    kept = ranking.threshold(scored, min_similarity=MIN_SIMILARITY)
    return [r.lineage for r in kept[:10]]


def _fused(
    c: Any, weight: float, depth: int = ranking.DEPTH, keyword: Sequence[Candidate] | None = None
) -> list[Scored]:
    kw = c.keyword[ranking.KEYWORD_POOL] if keyword is None else keyword
    return ranking.fuse(kw, c.vector[depth], weight=weight, depth=depth, min_similarity=MIN_SIMILARITY)


def changes(spaces: Sequence[Any], data: Path, stop: set[str]) -> list[Change]:
    """The candidates over `spaces` (locomo.Space, note_ids filled); `data` is the LoCoMo file (for
    the session dates)."""
    from rank_bm25 import BM25Okapi

    lineage = {s.name: {mid: int(nid.rsplit("_", 1)[1]) for nid, mid in s.note_ids.items()} for s in spaces}
    words = {s.name: [_words(t, stop) for _, t in s.memories] for s in spaces}
    bm25 = {s.name: BM25Okapi(words[s.name]) for s in spaces}
    memo: dict[tuple[Any, ...], list[Candidate]] = {}

    def bm25_list(space: Any, query: list[str], key: tuple[Any, ...]) -> list[Candidate]:
        if key not in memo:
            scores = bm25[space.name].get_scores(query)
            best = sorted(range(len(scores)), key=lambda i: -scores[i])[:100]
            ids = [m for m, _ in space.memories]
            memo[key] = [
                Candidate(lineage[space.name][ids[i]], float(scores[i])) for i in best if scores[i] > 0
            ]
        return memo[key]

    def rrf(space: Any, j: int, c: Any, p: tuple[int, float]) -> list[int]:
        k, w = p
        kw = sorted(c.keyword[ranking.KEYWORD_POOL], key=lambda x: -x.score)[: ranking.DEPTH]
        vec = sorted(c.vector[ranking.DEPTH], key=lambda x: -x.score)[: ranking.DEPTH]
        fused: dict[int, float] = collections.defaultdict(float)
        for r, x in enumerate(kw):
            fused[x.lineage] += w / (k + r + 1)
        for r, x in enumerate(vec):
            if x.score >= MIN_SIMILARITY:
                fused[x.lineage] += (1 - w) / (k + r + 1)
        return [lin for lin, _ in sorted(fused.items(), key=lambda x: -x[1])][:10]

    def by_length(space: Any, j: int, c: Any, p: tuple[float, float, int]) -> list[int]:
        short, long, most = p
        n = len(_words(space.questions[j].text, stop))
        return _cut(_fused(c, short if n <= most else long))

    def by_hits(space: Any, j: int, c: Any, p: tuple[float, float, int]) -> list[int]:
        few, many, most = p
        return _cut(_fused(c, few if len(c.keyword[ranking.KEYWORD_POOL]) <= most else many))

    def bm25_side(space: Any, j: int, c: Any, p: tuple[float, int]) -> list[int]:
        w, depth = p
        query = _words(space.questions[j].text, stop)
        return _cut(_fused(c, w, depth, bm25_list(space, query, (space.name, j))))

    def prf(space: Any, j: int, c: Any, p: tuple[float, int, int, float]) -> list[int]:
        w, docs, terms, beta = p
        key = (space.name, j, docs, terms, beta)
        if key not in memo:
            query = _words(space.questions[j].text, stop)
            at = {lin: i for i, (lin) in enumerate(lineage[space.name][m] for m, _ in space.memories)}
            idf = bm25[space.name].idf
            pool: collections.Counter[str] = collections.Counter()
            for r in _fused(c, ranking.KEYWORD_WEIGHT)[:docs]:
                for t in set(words[space.name][at[r.lineage]]):
                    pool[t] += idf.get(t, 0.0)
            extra = [t for t, _ in pool.most_common(terms + len(query)) if t not in query][:terms]
            scores = bm25[space.name].get_scores(query)
            if extra:
                scores = scores + beta * bm25[space.name].get_scores(extra)
            best = sorted(range(len(scores)), key=lambda i: -scores[i])[:100]
            ids = [m for m, _ in space.memories]
            memo[key] = [
                Candidate(lineage[space.name][ids[i]], float(scores[i])) for i in best if scores[i] > 0
            ]
        return _cut(_fused(c, w, keyword=memo[key]))

    dates: dict[tuple[str, int], tuple[int | None, int | None]] = {}
    for conv in json.loads(data.read_text()):
        for key, value in conv["conversation"].items():
            found = re.fullmatch(r"session_(\d+)_date_time", key)
            if found:
                dates[(conv["sample_id"], int(found.group(1)))] = _month_year(str(value), word_boundary=False)
    memory_of = {s.name: {lin: mid for mid, lin in lineage[s.name].items()} for s in spaces}

    def session_date(space: Any, j: int, c: Any, p: tuple[float, float]) -> list[int]:
        w, bonus = p
        fused = _fused(c, w)
        month, year = _month_year(space.questions[j].text)
        if month is None and year is None:
            return _cut(fused)
        conv = space.name.rsplit("-", 1)[0]
        out = []
        for r in fused:
            when = dates.get(
                (conv, space.sessions.get(memory_of[space.name].get(r.lineage, ""), -1)), (None, None)
            )
            same = (month is None or when[0] == month) and (year is None or when[1] == year)
            out.append(
                Scored(
                    r.lineage,
                    r.score + (bonus if same else 0.0),
                    r.keyword,
                    r.semantic,
                    r.similarity,
                    r.matched,
                )
            )
        out.sort(key=lambda r: -r.score)
        return _cut(out)

    half = WEIGHTS[::2]
    return [
        Change(
            "RRF (k, keyword weight)",
            [(k, w) for k in (5, 10, 20, 40, 60) for w in (0.3, 0.4, 0.5, 0.6, 0.7)],
            rrf,
        ),
        Change(
            "weight by question length (short, long, words)",
            [(a, b, n) for a in half for b in half for n in (3, 4, 5, 6)],
            by_length,
        ),
        Change(
            "weight by keyword matches (few, many, how many)",
            [(a, b, n) for a in half for b in half for n in (10, 30, 100, 300)],
            by_hits,
        ),
        Change("BM25 keyword side (weight, depth)", [(w, d) for w in WEIGHTS for d in (30, 50)], bm25_side),
        Change(
            "BM25 + pseudo-relevance feedback (weight, docs, terms, beta)",
            [(w, d, t, b) for w in half for d in (3, 5) for t in (5, 10) for b in (0.3, 0.6)],
            prf,
        ),
        Change(
            "session date bonus (weight, bonus)",
            [(w, b) for w in (0.4, 0.45, 0.5, 0.55, 0.6) for b in (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0)],
            session_date,
        ),
    ]


def _month_year(text: str, *, word_boundary: bool = True) -> tuple[int | None, int | None]:
    low = text.lower()
    edge = r"\b" if word_boundary else ""
    month = next((i for i, name in enumerate(MONTHS) if re.search(f"{edge}{name}{edge}", low)), None)
    year = re.search(r"\b(19|20)\d\d\b", low)
    return month, (int(year.group(0)) if year else None)
