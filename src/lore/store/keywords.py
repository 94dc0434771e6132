"""The keyword half of search_notes: PostgreSQL full text over a bounded pool of matches, ranked
BM25-style (each word's ts_rank times its idf in the spaces searched, from the term counts of
migration 0022). lore.store.search fuses it with the vector half (docs/design.md, Retrieval)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql

from lore.core import ranking
from lore.core.ranking import Candidate, Terms

_PARSE = """SELECT websearch_to_tsquery('english', %(query)s)::text,
                   tsvector_to_array(to_tsvector('english', %(query)s))"""

# How many current notes of the spaces hold each of the query's words, and how many there are: the
# term counts of migration 0022 plus the changes not folded into them yet (lexeme '': the notes).
_COUNTS = """WITH c AS (
    SELECT lexeme, sum(n)::bigint AS n FROM (
        SELECT lexeme, notes AS n FROM note_terms WHERE space = ANY(%(spaces)s) AND lexeme = ANY(%(words)s)
        UNION ALL
        SELECT '', notes FROM note_term_spaces WHERE space = ANY(%(spaces)s)
        UNION ALL
        SELECT lexeme, delta FROM note_term_changes
        WHERE space = ANY(%(spaces)s) AND lexeme = ANY(%(words)s || ''::text)) parts
    GROUP BY lexeme)
SELECT coalesce((SELECT n FROM c WHERE lexeme = ''), 0),
       (SELECT coalesce(json_object_agg(lexeme, n), json_build_object()) FROM c WHERE lexeme <> '')"""

# Keyword candidates, bounded whatever the space's size: the GIN index finds up to ranking.KEYWORD_POOL
# rows holding every word, then (when those are fewer) rows holding each word, rarest word first, each
# list in table order and never ranked as a whole; only that pool is read and ranked. A space where
# fewer than ranking.KEYWORD_POOL notes hold any query word (every space of a few thousand notes, for
# specific words) ranks all its matches, exactly. The rank is BM25-style: each word's ts_rank (how
# often and where in the note: title, tags, body, context) times its idf (how rare it is in the
# spaces), summed. The tsqueries are literals: each search is planned for its own words (a common
# word is scanned, a rare one looked up), never from a cached plan.
_KEYWORD = sql.SQL("""
WITH pool AS (
  (SELECT n.lineage, n.tsv, n.embedding_model FROM notes n
   WHERE n.tsv @@ {every}::tsquery AND n.space = ANY(%(spaces)s) AND n.superseded_at IS NULL {filters}
   LIMIT %(pool)s)
  {each}
  LIMIT %(pool)s
)
SELECT lineage, {score} AS score, coalesce(embedding_model = {model}, false)
FROM (SELECT DISTINCT ON (lineage) * FROM pool) p
{phrases}
ORDER BY score DESC, lineage DESC
LIMIT %(depth)s
""")
_EACH = sql.SQL("""UNION ALL
  (SELECT n.lineage, n.tsv, n.embedding_model FROM notes n
   WHERE n.tsv @@ {word}::tsquery AND n.space = ANY(%(spaces)s) AND n.superseded_at IS NULL {filters}
   LIMIT %(pool)s)""")
_KINDS = sql.SQL("AND n.kind = ANY(%(kinds)s::text[])")
_TAGS = sql.SQL("AND n.tags @> %(tags)s::text[]")


def parse(conn: psycopg.Connection, query: str) -> tuple[Terms | None, list[str]]:
    """The query's keyword forms (None: only stopwords) and its lexemes (for feedback)."""
    row = conn.execute(_PARSE, {"query": query}).fetchone()
    assert row is not None
    return ranking.terms(row[0] or ""), list(row[1] or [])


def weights(conn: psycopg.Connection, spaces: Sequence[str], forms: Terms) -> list[tuple[str, float]]:
    """The query's words and phrases with their idf over `spaces`, rarest first."""
    words = sorted({w for unit in forms.units for w in ranking.lexemes(unit)})
    row = conn.execute(_COUNTS, {"spaces": list(spaces), "words": words}).fetchone()
    assert row is not None
    return ranking.unit_weights(forms.units, {k: int(v) for k, v in (row[1] or {}).items()}, int(row[0]))


def keyword_candidates(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    query: str | Terms | None,
    *,
    model: str | None,
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    depth: int = ranking.DEPTH,
    pool: int = ranking.KEYWORD_POOL,
) -> list[Candidate]:
    forms = parse(conn, query)[0] if isinstance(query, str) else query
    if forms is None:
        return []
    units = weights(conn, spaces, forms)
    if not units:
        return []
    params = query_filters(spaces, kinds, tags, depth) | {"pool": max(pool, depth)}

    def literal(text: str) -> sql.Literal:  # the statement also has placeholders: keep % literal
        return sql.Literal(text.replace("%", "%%"))

    filters = sql.SQL(" ").join([_KINDS] * bool(kinds) + [_TAGS] * bool(tags))
    score = sql.SQL(" + ").join(
        sql.SQL("ts_rank(tsv, {}::tsquery) * {}").format(literal(unit), sql.Literal(round(weight, 6)))
        for unit, weight in units
    )
    statement = _KEYWORD.format(
        every=literal(forms.every),
        each=sql.SQL("\n  ").join(
            _EACH.format(word=literal(form), filters=filters) for form in forms.each([u for u, _ in units])
        ),
        score=score,
        model=sql.Literal(model),
        filters=filters,
        # candidates match a loosened phrase; only then is the phrase itself checked
        phrases=sql.SQL("WHERE tsv @@ {}::tsquery").format(literal(forms.rank))
        if ranking.PHRASE.search(forms.rank)
        else sql.SQL(""),
    )
    rows = conn.execute(statement, params).fetchall()
    return [Candidate(lineage, float(score), bool(embedded)) for lineage, score, embedded in rows]


def query_filters(
    spaces: Sequence[str], kinds: Sequence[str] | None, tags: Sequence[str] | None, depth: int
) -> dict[str, object]:
    return {
        "spaces": list(spaces),
        "kinds": list(kinds) if kinds else None,
        "tags": list(tags) if tags else None,
        "depth": depth,
    }


@dataclass(frozen=True)
class KeywordPart:
    """The half of a search that needs no query vector (the tool runs it while the query is embedded)."""

    forms: Terms | None
    words: list[str]  # the query's lexemes, for feedback
    candidates: list[Candidate]


def keyword_part(
    conn: psycopg.Connection,
    spaces: Sequence[str],
    query: str,
    *,
    model: str | None,
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
) -> KeywordPart:
    """`model`: the embedder's model (marks which matches have a vector to compare), or None."""
    forms, words = parse(conn, query)
    return KeywordPart(
        forms, words, keyword_candidates(conn, spaces, forms, model=model, kinds=kinds, tags=tags)
    )


def compact(conn: psycopg.Connection) -> int:
    """Fold the term-count changes writes appended into the counts (migration 0022); 0 when there
    were none or another process is doing it. Returns how many (space, word) sums were folded."""
    with conn.transaction():
        row = conn.execute("SELECT lore_compact_terms()").fetchone()
    return int(row[0]) if row and row[0] else 0
