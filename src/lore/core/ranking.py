"""The ranking of search_notes, pure (unit-tested without a database): each list's candidates
(keyword: ts_rank; vector: cosine similarity) min-max normalised over its top DEPTH and fused by a
weighted mean, cut by a relevance threshold, minus what a close query marked irrelevant.

How the fusion was chosen (LoCoMo dev split, docs/benchmarks.md): equal-weight reciprocal rank
fusion loses to the best single method on both views; min-max normalising each list over its top
DEPTH candidates and averaging the two scores beats the best single method on both. The SQL that
fetches the candidates is lore.store.search.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

DEPTH = 50  # candidates taken from each list, and the span each list is normalised over
KEYWORD_POOL = 600  # keyword matches ranked per search (every-word matches first): bounds its cost
KEYWORD_WEIGHT = 0.5  # fused = w * keyword + (1 - w) * semantic, both min-max normalised
DATE_BONUS = 0.5  # added to the fused score of a note from the period a question names
SECOND_WEIGHT = 0.2  # the second model's share of the fused score, when there is one
RELATIVE_FLOOR = 0.3  # a hit must score at least this share of the best hit
REJECT_SIMILARITY = 0.8  # a rejected (note, query) applies to queries at least this close...
REJECT_OVERLAP = 0.75  # ...or, without vectors, sharing this share of their lexemes
MAX_LINKED = 3
SNIPPET_WORDS = 30


@dataclass(frozen=True)
class Candidate:
    """One row from one list: keyword (score = ts_rank) or vector (score = cosine similarity)."""

    lineage: int
    score: float
    embedded: bool = True  # keyword list: has a vector of the query's model


@dataclass(frozen=True)
class Scored:
    lineage: int
    score: float  # fused, 0..1
    keyword: float  # normalised keyword part, 0..1 (0 = no keyword match in the top DEPTH)
    semantic: float | None  # normalised vector part; None = the row has no vector to compare
    similarity: float | None  # raw cosine similarity when the row was a vector candidate
    matched: bool  # the row matched the keyword query
    second: float | None = None  # raw cosine similarity by the second model, when a candidate of it


@dataclass(frozen=True)
class Hit:
    id: str
    kind: str
    title: str | None
    snippet: str
    score: float
    why: str  # keyword | semantic | linked
    via: str | None = None  # for linked hits: "n_3 depends_on"
    similar: tuple[str, ...] | None = None  # near duplicates folded into this hit (search shows one)
    when: str | None = None  # when it happened (YYYY-MM-DD), shown when not the day it was written

    @classmethod
    def of(cls, fields: Mapping[str, Any]) -> Hit:
        """A hit from its JSON form (what `/api/search` and the search_notes tool send)."""
        names = cls.__dataclass_fields__
        given = {k: v for k, v in fields.items() if k in names}
        if given.get("similar") is not None:
            given["similar"] = tuple(given["similar"])
        return cls(**given)

    def line(self) -> str:
        """The hit as one line, as the search_notes tool and `lore search` both show it:
        `n_4 [kind, when] title — snippet (score, why, +N similar: …)`; a linked hit's why is
        `linked: n_3 depends_on`."""
        title = f"{self.title} — " if self.title else ""
        why = f"linked: {self.via}" if self.via else self.why
        same = f", +{len(self.similar)} similar: {', '.join(self.similar)}" if self.similar else ""
        when = f", {self.when}" if self.when else ""
        return f"{self.id} [{self.kind}{when}] {title}{self.snippet} ({self.score:g}, {why}{same})"


@dataclass(frozen=True)
class Rejection:
    note: int
    lexemes: tuple[str, ...]
    vector: tuple[float, ...] | None


def _scale(value: float, lo: float, hi: float) -> float:
    if hi - lo <= 1e-12:
        return 1.0 if value >= hi else 0.0
    return min(1.0, max(0.0, (value - lo) / (hi - lo)))


def fuse(
    keyword: Sequence[Candidate],
    vector: Sequence[Candidate],
    *,
    weight: float = KEYWORD_WEIGHT,
    depth: int = DEPTH,
    min_similarity: float = 0.0,
    second: Sequence[Candidate] = (),
    second_weight: float = SECOND_WEIGHT,
    second_min: float = 0.0,
) -> list[Scored]:
    """Min-max normalise each list over its top `depth`, then a weighted mean, best first.

    Each list's floor is its last score when the list is full (a row outside it scores no better).
    A shorter list holds every match: then the floor is what "no evidence" scores (0 for keywords,
    `min_similarity` for vectors), so that a small space does not push its last row to zero. A row
    with no vector of the query's model is ranked by its keyword score alone. A second model's
    list (`second`), when there is one, is normalised the same way (its floor `second_min`) and
    weighs `second_weight` of the result, the first two the rest.
    """
    if second:
        return _with_second(
            fuse(keyword, vector, weight=weight, depth=depth, min_similarity=min_similarity),
            second,
            second_weight,
            depth,
            second_min,
        )
    keyword = sorted(keyword, key=lambda c: -c.score)[:depth]
    vector = sorted(vector, key=lambda c: -c.score)[:depth]
    k_hi = keyword[0].score if keyword else 0.0
    k_lo = keyword[-1].score if len(keyword) >= depth else 0.0
    v_hi, v_lo = (vector[0].score, vector[-1].score) if vector else (0.0, 0.0)
    if len(vector) < depth:
        v_lo = min(v_lo, min_similarity)
    semantic = {c.lineage: c.score for c in vector}
    matched = {c.lineage: c for c in keyword}
    out = []
    for lineage in dict.fromkeys([*(c.lineage for c in keyword), *(c.lineage for c in vector)]):
        kw = matched.get(lineage)
        k = _scale(kw.score, k_lo, k_hi) if kw else 0.0
        sim = semantic.get(lineage)
        if sim is not None:
            s: float | None = _scale(sim, v_lo, v_hi)
        elif kw is not None and (not kw.embedded or not vector):
            s = None  # nothing to compare: keyword alone decides
        else:
            s = 0.0  # embedded, but not among the nearest `depth`
        score = k if s is None else weight * k + (1 - weight) * s
        out.append(Scored(lineage, score, k, s, sim, kw is not None))
    out.sort(key=lambda r: (-r.score, -r.keyword, r.lineage))
    return out


def _with_second(
    fused: Sequence[Scored], second: Sequence[Candidate], weight: float, depth: int, floor: float
) -> list[Scored]:
    second = sorted(second, key=lambda c: -c.score)[:depth]
    hi, lo = second[0].score, second[-1].score
    if len(second) < depth:
        lo = min(lo, floor)
    near = {c.lineage: c.score for c in second}
    out = [
        replace(
            r,
            score=(1 - weight) * r.score
            + weight * (_scale(near[r.lineage], lo, hi) if r.lineage in near else 0.0),
            second=near.get(r.lineage),
        )
        for r in fused
    ]
    seen = {r.lineage for r in fused}
    for lineage, sim in near.items():
        if lineage not in seen:
            out.append(Scored(lineage, weight * _scale(sim, lo, hi), 0.0, 0.0, None, False, sim))
    out.sort(key=lambda r: (-r.score, -r.keyword, r.lineage))
    return out


def evident(row: Scored, min_similarity: float, second_min: float = 1.0) -> bool:
    """A keyword match, or a cosine similarity of at least `min_similarity` (`second_min` by the
    second model): what a hit needs besides its score."""
    return (
        row.matched
        or (row.similarity is not None and row.similarity >= min_similarity)
        or (row.second is not None and row.second >= second_min)
    )


def threshold(
    scored: Sequence[Scored],
    *,
    min_similarity: float,
    relative: float = RELATIVE_FLOOR,
    second_min: float = 1.0,
) -> list[Scored]:
    """The server-side relevance cut. A hit needs evidence (`evident`) and at least `relative`
    times the best such hit's score."""
    kept = [r for r in scored if evident(r, min_similarity, second_min)]
    if not kept:
        return []
    floor = relative * max(r.score for r in kept)
    return [r for r in kept if r.score >= floor and r.score > 0]


def relevance_floor(
    scored: Sequence[Scored],
    *,
    min_similarity: float,
    relative: float = RELATIVE_FLOOR,
    second_min: float = 1.0,
) -> float:
    """The score `threshold` cuts at (0 when nothing has evidence)."""
    kept = [r.score for r in scored if evident(r, min_similarity, second_min)]
    return relative * max(kept) if kept else 0.0


@dataclass
class Trace:
    """What one search saw, filled in by lore.store.search.search when asked (`lore search
    --explain`): both lists of candidates, the fused scores, the cut, what was rejected, the hits."""

    keyword: list[Candidate] = field(default_factory=list)
    vector: list[Candidate] = field(default_factory=list)
    fused: list[Scored] = field(default_factory=list)
    min_similarity: float = 0.0
    floor: float = 0.0
    kept: list[int] = field(default_factory=list)  # past the threshold
    rejected: set[int] = field(default_factory=set)  # marked irrelevant for a close query
    top: list[int] = field(default_factory=list)  # the hits, in order
    limit: int = 0


@dataclass(frozen=True)
class Explained:
    """One candidate: its place and score in each list, its fused score, and what became of it."""

    lineage: int
    keyword_rank: int | None
    keyword_score: float | None
    vector_rank: int | None
    similarity: float | None
    fused: float | None
    outcome: str  # "hit 1", or why it was dropped


def explain(trace: Trace) -> list[Explained]:
    """Every candidate of `trace`, hits first (in order), then the dropped ones by fused score."""
    keyword = {
        c.lineage: (i + 1, c.score) for i, c in enumerate(sorted(trace.keyword, key=lambda c: -c.score))
    }
    vector = {c.lineage: (i + 1, c.score) for i, c in enumerate(sorted(trace.vector, key=lambda c: -c.score))}
    fused = {r.lineage: r for r in trace.fused}
    kept, top = set(trace.kept), {lineage: i + 1 for i, lineage in enumerate(trace.top)}
    rows = []
    for lineage in dict.fromkeys([*trace.top, *(r.lineage for r in trace.fused), *keyword, *vector]):
        row = fused.get(lineage)
        if lineage in top:
            outcome = f"hit {top[lineage]}"
        elif lineage in trace.rejected:
            outcome = "dropped: marked irrelevant for a close query"
        elif lineage in kept:
            outcome = f"dropped: beyond the limit of {trace.limit}"
        elif (
            row is not None
            and not row.matched
            and (row.similarity is None or row.similarity < trace.min_similarity)
        ):
            outcome = f"dropped: no keyword match and similarity under {trace.min_similarity:g}"
        else:
            score = row.score if row is not None else 0.0
            outcome = f"dropped: below the threshold ({score:.3f} < {trace.floor:.3f})"
        k, v = keyword.get(lineage), vector.get(lineage)
        rows.append(
            Explained(
                lineage,
                k[0] if k else None,
                round(k[1], 4) if k else None,
                v[0] if v else None,
                round(v[1], 4) if v else None,
                round(row.score, 4) if row is not None else None,
                outcome,
            )
        )
    return rows


def why(row: Scored, weight: float = KEYWORD_WEIGHT) -> str:
    """Which list contributed more to the fused score."""
    if row.semantic is None:
        return "keyword"
    return "keyword" if weight * row.keyword >= (1 - weight) * row.semantic else "semantic"


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = sum(x * x for x in a) ** 0.5
    nb = sum(y * y for y in b) ** 0.5
    return dot / (na * nb) if na and nb else 0.0


def rejected(
    rejections: Iterable[Rejection], lexemes: Sequence[str], vector: Sequence[float] | None
) -> set[int]:
    """Notes to drop for this query: rejected for a query close to it. Vectors decide when both
    sides have one of the same model; otherwise the share of shared lexemes does."""
    words = set(lexemes)
    out = set()
    for r in rejections:
        if vector is not None and r.vector is not None and len(r.vector) == len(vector):
            close = cosine(vector, r.vector) >= REJECT_SIMILARITY
        else:
            other = set(r.lexemes)
            union = words | other
            close = bool(union) and len(words & other) / len(union) >= REJECT_OVERLAP
        if close:
            out.add(r.note)
    return out


def snippet_of(body: str, words: int = SNIPPET_WORDS) -> str:
    parts = body.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


@dataclass(frozen=True)
class Terms:
    """A query's words as tsqueries (PostgreSQL's text form), made from websearch_to_tsquery.

    every: all the words, any: at least one of them (negated words excluded from both), both
    with phrases loosened to AND, which the GIN index answers without reading rows. rank: the
    words OR-ed with phrases intact: what ts_rank scores and a keyword match must satisfy.
    """

    every: str
    any: str
    rank: str
    units: tuple[str, ...] = ()  # the positive words and phrases, each a tsquery (weighed by rarity)
    exclude: str = ""  # the negated words, as `& !x` to append to a tsquery

    def each(self, units: Sequence[str]) -> list[str]:
        """One tsquery per unit, in the order given, for the keyword pool: the rows holding that
        unit and none of the units before it, nor every unit (those rows are already in the pool).
        Phrases are loosened to AND, as in `every` and `any`; negated words stay excluded."""
        out = []
        for i, unit in enumerate(units):
            before = "".join(f" & !( {PHRASE.sub('&', u)} )" for u in units[:i])
            out.append(f"( {PHRASE.sub('&', unit)} ) & !( {self.every} ){before}{self.exclude}")
        return out


_TOKEN = re.compile(r"'(?:[^']|'')*'(?::[*A-Da-d]+)?|<(?:-|\d+)>|[&|!()]|\S+")
PHRASE = re.compile(r"<(?:-|\d+)>")


def terms(tsquery: str) -> Terms | None:
    """The forms of websearch_to_tsquery's output; None when it holds no words (only stopwords).

    Top-level operands (split at `&` and `|` outside parentheses) are the query's words or
    phrases (websearch's `or` only widens `any`); negated ones (`-x`, shown as `!x`) exclude rows
    from the candidate forms."""
    tokens = _TOKEN.findall(tsquery)
    if not tokens:
        return None
    units: list[list[str]] = [[]]
    depth = 0
    for tok in tokens:
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        if depth == 0 and tok in ("&", "|"):
            units.append([])
        else:
            units[-1].append(tok)
    positive = [" ".join(u) for u in units if u and u[0] != "!"]
    negative = [" ".join(u) for u in units if u and u[0] == "!"]
    if not positive:
        return None

    def loose(text: str) -> str:
        return PHRASE.sub("&", text)

    neg = "".join(f" & {n}" for n in negative)
    return Terms(
        every=" & ".join(f"( {loose(u)} )" for u in positive) + neg,
        any="( " + " | ".join(f"( {loose(u)} )" for u in positive) + f" ){neg}",
        rank=" | ".join(f"( {u} )" for u in positive),
        units=tuple(dict.fromkeys(positive)),
        exclude=neg,
    )


_LEXEME = re.compile(r"'((?:[^']|'')*)'")


def lexemes(unit: str) -> list[str]:
    """The lexemes of one tsquery unit (`'rare'`, or a phrase `'a' <-> 'b'`)."""
    return [m.replace("''", "'") for m in _LEXEME.findall(unit)]


def idf(notes_with: int, notes: int) -> float:
    """BM25's inverse document frequency: how rare a word is among `notes` (never negative)."""
    notes = max(notes, notes_with)
    return math.log(1 + (notes - notes_with + 0.5) / (notes_with + 0.5))


def unit_weights(units: Sequence[str], counts: dict[str, int], notes: int) -> list[tuple[str, float]]:
    """Each unit of a query and its weight, the idf of its rarest lexeme (a word the term counts
    never saw counts as in no note), rarest first: the keyword side's terms (lore.store.search)."""
    out = []
    for unit in units:
        words = lexemes(unit)
        if words:
            out.append((unit, max(idf(counts.get(w, 0), notes) for w in words)))
    return sorted(out, key=lambda u: -u[1])


def favour(scored: Sequence[Scored], then: set[int], bonus: float = DATE_BONUS) -> list[Scored]:
    """`scored` with `bonus` added to the notes in `then` (from the period the question names),
    best first."""
    out = [replace(r, score=r.score + bonus) if r.lineage in then else r for r in scored]
    out.sort(key=lambda r: (-r.score, -r.keyword, r.lineage))
    return out
