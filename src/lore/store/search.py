"""search_notes: keyword (PostgreSQL full text, GIN) + vector (pgvector HNSW, cosine) candidates,
fused, cut by a relevance threshold, minus what the session marked irrelevant, plus 1-hop links.

The ranking is pure (lore.core.ranking: `fuse`, `threshold`, `rejected`, `why`); the SQL is here
and, for the keyword half, in lore.store.keywords (its names are re-exported here).

Rows not yet embedded (or embedded by another model) still come back through the keyword list:
their fused score is their keyword score alone. The keyword list ranks a bounded pool of matches
(KEYWORD_POOL), so that its cost does not grow with the space (docs/decisions.md, "Retrieval").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

import psycopg
from psycopg import sql

from lore.core import ids, ranking, secrets, similarity, when
from lore.core.errors import NotFound
from lore.core.ranking import Candidate, Hit, Rejection, Scored, Terms
from lore.core.session import Origin
from lore.embeddings import to_pgvector
from lore.store import graph, notes
from lore.store.keywords import KeywordPart, keyword_candidates, keyword_part, parse, query_filters, weights

__all__ = [
    "KeywordPart",
    "keyword_candidates",
    "keyword_part",
    "parse",
    "search",
    "vector_candidates",
    "weights",
]

# --- SQL ----------------------------------------------------------------------------------------

# Expression and predicate match the model's partial HNSW index (migration 0002); model and
# dimension are literals so that the planner can prove the predicate, whatever plan it caches.
# The second model's vectors (lore.store.second_vectors) are `embedding2`, indexed the same way.
_VECTOR = sql.SQL("""
SELECT n.lineage, 1 - (n.{column}::vector({dim}) <=> %(vector)s::vector({dim})) AS similarity
FROM notes n
WHERE n.{model_column} = {model} AND n.superseded_at IS NULL AND n.space = ANY(%(spaces)s)
  AND (%(kinds)s::text[] IS NULL OR n.kind = ANY(%(kinds)s::text[]))
  AND (%(tags)s::text[] IS NULL OR n.tags @> %(tags)s::text[])
ORDER BY n.{column}::vector({dim}) <=> %(vector)s::vector({dim})
LIMIT %(depth)s
""")

WORDS = ranking.SNIPPET_WORDS
_SHOW = f"""
SELECT n.lineage, n.kind, n.title,
       CASE WHEN n.lineage = ANY(%(matched)s) THEN
            ts_headline('english', left(n.body, 4000), %(rank)s::tsquery,
                        'MaxWords={WORDS}, MinWords=12, MaxFragments=1, StartSel=«, StopSel=»')
            ELSE left(n.body, 600) END,
       CASE WHEN n.happened_at::date <> n.recorded_at::date THEN n.happened_at END
FROM notes n
WHERE n.lineage = ANY(%(ids)s) AND n.superseded_at IS NULL
"""

_REJECTIONS = """
SELECT note, lexemes, embedding::text FROM irrelevant
WHERE space = %(space)s AND note = ANY(%(notes)s)
  AND (embedding_model IS NULL OR embedding_model = %(model)s OR %(model)s::text IS NULL)
"""


# Filters (space, kind, tag) apply after the index walk; iterative scans (pgvector 0.8 and later)
# keep walking until `depth` rows pass them, instead of returning fewer. Older pgvector reserves the
# `hnsw.` prefix without that setting (setting it is an error), so it is set only where it exists;
# there, a wider ef_search is all that widens the walk.
_VECTOR_SETTINGS = """
SELECT set_config('hnsw.ef_search', %s, true),
       CASE WHEN (SELECT string_to_array(extversion, '.')::int[] >= '{0,8}'
                    FROM pg_extension WHERE extname = 'vector')
            THEN set_config('hnsw.iterative_scan', 'relaxed_order', true) END"""


def vector_candidates(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    vector: Sequence[float],
    *,
    model: str,
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    depth: int = ranking.DEPTH,
    second: bool = False,
) -> list[Candidate]:
    """The nearest `depth` notes to `vector` by `model` (`second`: the second model's vectors)."""
    statement = _VECTOR.format(
        column=sql.Identifier("embedding2" if second else "embedding"),
        model_column=sql.Identifier("embedding2_model" if second else "embedding_model"),
        dim=sql.Literal(len(vector)),
        model=sql.Literal(model),
    )
    params = query_filters(spaces, kinds, tags, depth) | {"vector": to_pgvector(vector)}
    # The settings are local to a transaction: the query must run in the same one (an autocommit
    # connection, as the server's pool is, would drop them before the query and scan 40 rows).
    with conn.transaction():
        conn.execute(_VECTOR_SETTINGS, (str(max(40, depth * 2)),))
        rows = conn.execute(statement, params).fetchall()
    return sorted((Candidate(lineage, float(sim)) for lineage, sim in rows), key=lambda c: -c.score)


def rejections(
    conn: psycopg.Connection, space: str, notes: Sequence[int], model: str | None
) -> list[Rejection]:
    if not notes:
        return []
    rows = conn.execute(_REJECTIONS, {"space": space, "notes": list(notes), "model": model}).fetchall()
    return [Rejection(note, tuple(lex), _parse_vector(vec)) for note, lex, vec in rows]


def _parse_vector(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    return tuple(float(x) for x in text.strip("[]").split(","))


def search(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    query: str,
    *,
    session_space: str,
    vector: Sequence[float] | None = None,
    model: str | None = None,
    min_similarity: float = 0.3,
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    limit: int = 5,
    expand: bool = True,
    keyword: KeywordPart | None = None,
    nearest: Sequence[Candidate] | None = None,
    trace: ranking.Trace | None = None,
    collapse: bool = True,
    now: datetime | None = None,
    second: Sequence[Candidate] = (),
    second_min: float = 1.0,
) -> list[Hit]:
    """Hybrid search over `spaces` (the session's readable spaces). `vector` is the query's
    embedding by `model`, or None (no embedder, or it is down): then keyword only. `keyword` and
    `nearest`: the same query's `keyword_part` and `vector_candidates`, when the caller ran them.
    `trace`: filled in with what the search saw (`lore search --explain`). `collapse`: near
    duplicates among the hits are shown once (the best ranked), the others named with it. A query
    naming a date or a period (lore.core.when) favours the notes that happened then (`now`: the
    clock "last week" is counted from). `second`: the second model's nearest notes (a third signal),
    `second_min` its similarity floor."""
    use_vector = vector is not None and model is not None
    if keyword is None:
        keyword = keyword_part(
            conn, spaces, query, model=model if use_vector else None, kinds=kinds, tags=tags
        )
    forms, words = keyword.forms, keyword.words
    if nearest is None:
        nearest = []
        if vector is not None and model is not None:
            nearest = vector_candidates(conn, spaces, vector, model=model, kinds=kinds, tags=tags)
    fused = ranking.fuse(
        keyword.candidates, nearest, min_similarity=min_similarity, second=second, second_min=second_min
    )
    named = when.period(query, now or datetime.now(UTC))
    if named is not None and fused:
        fused = ranking.favour(fused, happened_in(conn, [r.lineage for r in fused], named))
    kept = ranking.threshold(fused, min_similarity=min_similarity, second_min=second_min)
    drop = (
        ranking.rejected(rejections(conn, session_space, [r.lineage for r in kept], model), words, vector)
        if kept
        else set()
    )
    ranked = [r for r in kept if r.lineage not in drop]
    if ranked and not (kinds and "handoff" in kinds):  # older handoffs go after everything else
        older = older_handoffs(conn, [r.lineage for r in ranked])
        ranked = [r for r in ranked if r.lineage not in older] + [r for r in ranked if r.lineage in older]
    folded: dict[int, list[int]] = {}
    if collapse and len(ranked) > 1:
        ranked, folded = fold(conn, ranked[: limit * FOLD_DEPTH])
    top = ranked[:limit]
    if trace is not None:
        trace.keyword, trace.vector, trace.fused = list(keyword.candidates), list(nearest), fused
        trace.min_similarity, trace.limit = min_similarity, limit
        trace.floor = ranking.relevance_floor(fused, min_similarity=min_similarity, second_min=second_min)
        trace.kept, trace.rejected, trace.top = [r.lineage for r in kept], drop, [r.lineage for r in top]
    if not top:
        return []
    linked: list[tuple[int, graph.Link]] = []
    if expand:
        neighbours = graph.neighbours(conn, [r.lineage for r in top], spaces)
        hidden = drop | {x for same in folded.values() for x in same}
        linked = pick_linked(
            [r.lineage for r in top], neighbours, hidden, limit=min(ranking.MAX_LINKED, limit)
        )
    return _show(conn, forms, top, linked, folded)


_HAPPENED = """SELECT lineage, coalesce(happened_at, recorded_at) FROM notes
WHERE lineage = ANY(%s) AND superseded_at IS NULL"""


def happened_in(conn: psycopg.Connection, lineages: Sequence[int], named: when.Period) -> set[int]:
    """Which of `lineages` happened in the period `named` (a note's time of event, else its write time)."""
    return {int(lineage) for lineage, at in conn.execute(_HAPPENED, (list(lineages),)) if named.holds(at)}


# Handoffs older than the latest few of their repository (lore.store.notes.HANDOFFS_LISTED) stay
# searchable, but rank after every other hit unless the search asks for handoffs: every session leaves
# one, and each names its repository, so they would crowd out what was asked for.
_OLDER_HANDOFFS = """SELECT h.note FROM (
    SELECT note, row_number() OVER (PARTITION BY space, root ORDER BY updated_at DESC, id DESC) AS k
    FROM handoffs WHERE (space, root) IN (SELECT space, root FROM handoffs WHERE note = ANY(%(notes)s))) h
WHERE h.k > %(keep)s AND h.note = ANY(%(notes)s)"""


def older_handoffs(conn: psycopg.Connection, lineages: Sequence[int]) -> set[int]:
    """Which of `lineages` are handoffs older than the latest few of their repository."""
    rows = conn.execute(_OLDER_HANDOFFS, {"notes": list(lineages), "keep": notes.HANDOFFS_LISTED}).fetchall()
    return {int(r[0]) for r in rows}


FOLD_DEPTH = 3  # hits compared for near duplicates: this many times the limit
_TEXTS = """SELECT lineage, coalesce(title, ''), left(body, 2000) FROM notes
WHERE lineage = ANY(%s) AND superseded_at IS NULL"""


def fold(conn: psycopg.Connection, ranked: Sequence[Scored]) -> tuple[list[Scored], dict[int, list[int]]]:
    """`ranked` with each near duplicate folded into the best-ranked hit it repeats
    (lore.core.similarity), and what was folded into each."""
    texts = {int(r[0]): (r[1], r[2]) for r in conn.execute(_TEXTS, ([r.lineage for r in ranked],))}

    def text(row: Scored) -> similarity.Text:
        title, body = texts.get(row.lineage, ("", ""))
        return similarity.Text.of(f"{title}\n{body}")

    groups = similarity.collapse(list(ranked), text)
    return [g.item for g in groups], {
        g.item.lineage: [x.lineage for x in g.similar] for g in groups if g.similar
    }


def pick_linked(
    order: Sequence[int], neighbours: Sequence[graph.Link], drop: set[int], *, limit: int
) -> list[tuple[int, graph.Link]]:
    """1-hop neighbours of the hits, in the hits' order, each once, never a hit or a ranking.rejected note."""
    seen = set(order) | drop
    rank = {lineage: i for i, lineage in enumerate(order)}
    out: list[tuple[int, graph.Link]] = []
    for link in sorted(neighbours, key=lambda n: (rank.get(n.hit, len(rank)), n.other)):
        if link.other in seen or len(out) >= limit:
            continue
        seen.add(link.other)
        out.append((link.other, link))
    return out


def _show(
    conn: psycopg.Connection,
    forms: Terms | None,
    top: Sequence[Scored],
    linked: Sequence[tuple[int, graph.Link]],
    folded: dict[int, list[int]] | None = None,
) -> list[Hit]:
    wanted = [r.lineage for r in top] + [lineage for lineage, _ in linked]
    matched = [r.lineage for r in top if r.matched] if forms is not None else []
    rank = forms.rank if forms is not None else None
    rows = conn.execute(_SHOW, {"rank": rank, "ids": wanted, "matched": matched}).fetchall()
    shown = {lineage: (kind, title, _clean(text), at) for lineage, kind, title, text, at in rows}
    hits = []
    for r in top:
        if r.lineage in shown:
            kind, title, text, at = shown[r.lineage]
            same = (folded or {}).get(r.lineage)
            hits.append(
                Hit(
                    ids.note(r.lineage),
                    kind,
                    title,
                    text,
                    round(r.score, 3),
                    ranking.why(r),
                    similar=tuple(ids.note(x) for x in same) if same else None,
                    when=when.day_of(at) if at else None,
                )
            )
    scores = {r.lineage: r.score for r in top}
    for lineage, link in linked:
        if lineage in shown:
            kind, title, text, at = shown[lineage]
            score = round(0.5 * scores.get(link.hit, 0.0), 3)
            hits.append(
                Hit(
                    ids.note(lineage),
                    kind,
                    title,
                    text,
                    score,
                    "linked",
                    link.describe(),
                    when=when.day_of(at) if at else None,
                )
            )
    return hits


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    return text if "«" in text else ranking.snippet_of(text)


def mark_irrelevant(
    conn: psycopg.Connection,
    origin: Origin,
    readable: Sequence[str],
    note: int,
    query: str,
    *,
    vector: Sequence[float] | None,
    model: str | None,
) -> int:
    """Record that `note` does not answer `query` for searches from the session's space."""
    secrets.refuse(("query", query), what="query")
    with conn.transaction():
        found = conn.execute(
            "SELECT 1 FROM notes WHERE lineage = %s AND superseded_at IS NULL AND space = ANY(%s)",
            (note, list(readable)),
        ).fetchone()
        if found is None:
            raise NotFound(
                f"No note n_{note} in this session's spaces.", "Call search_notes to find note ids."
            )
        row = conn.execute(
            "INSERT INTO irrelevant (space, note, query, lexemes, embedding, embedding_model, source, "
            "workspace) VALUES (%s, %s, %s, tsvector_to_array(to_tsvector('english', %s)), "
            "%s::vector, %s, %s, %s) RETURNING id",
            (
                origin.space,
                note,
                query,
                query,
                to_pgvector(vector) if vector is not None else None,
                model if vector is not None else None,
                origin.source,
                origin.workspace,
            ),
        ).fetchone()
    assert row is not None
    return int(row[0])
