"""The pure ranking of search_notes: fusion, relevance threshold, feedback, expansion."""

from __future__ import annotations

import pytest

from lore.core.ranking import (
    Candidate,
    Rejection,
    Scored,
    favour,
    fuse,
    idf,
    lexemes,
    rejected,
    snippet_of,
    terms,
    threshold,
    unit_weights,
    why,
)
from lore.store import graph
from lore.store.search import pick_linked


def test_fusion_normalises_each_list_and_averages() -> None:
    keyword = [Candidate(1, 0.6), Candidate(2, 0.3)]
    vector = [Candidate(2, 0.9), Candidate(3, 0.5)]
    out = {r.lineage: r for r in fuse(keyword, vector, min_similarity=0.3)}
    assert out[1].keyword == 1.0 and out[1].semantic == 0.0  # embedded, but not among the nearest
    assert out[2].keyword == pytest.approx(0.5) and out[2].semantic == 1.0
    assert out[3].keyword == 0.0 and out[3].semantic == pytest.approx((0.5 - 0.3) / (0.9 - 0.3))
    assert [r.lineage for r in fuse(keyword, vector, min_similarity=0.3)] == [2, 1, 3]


def test_full_lists_use_their_last_score_as_floor() -> None:
    keyword = [Candidate(i, 1.0 - i / 10) for i in range(5)]
    fused = {r.lineage: r for r in fuse(keyword, [], depth=5)}
    assert fused[4].keyword == 0.0 and fused[0].keyword == 1.0


def test_rows_without_vectors_fall_back_to_keyword_alone() -> None:
    keyword = [Candidate(1, 0.5, embedded=False), Candidate(2, 0.5, embedded=True)]
    vector = [Candidate(3, 0.8)]
    out = {r.lineage: r for r in fuse(keyword, vector)}
    assert out[1].semantic is None and out[1].score == 1.0  # not embedded yet: keyword decides
    assert out[2].semantic == 0.0 and out[2].score == 0.5  # embedded and far: both count
    # no query vector at all (embedder down): pure keyword ranking
    assert [r.score for r in fuse([Candidate(1, 0.4), Candidate(2, 0.2)], [])] == [1.0, 0.5]


def test_threshold_needs_evidence_and_a_share_of_the_best() -> None:
    rows = [
        Scored(1, 0.9, 0.8, 1.0, 0.7, True),
        Scored(2, 0.5, 0.0, 0.9, 0.5, False),  # semantic only, similar enough
        Scored(3, 0.4, 0.0, 0.8, 0.2, False),  # semantic only, under min_similarity
        Scored(4, 0.2, 0.4, None, None, True),  # keyword, but under 0.3 x best
    ]
    assert [r.lineage for r in threshold(rows, min_similarity=0.3)] == [1, 2]
    # nothing evident at all: nothing comes back (no "closest anyway" dump)
    assert threshold([Scored(3, 1.0, 0.0, 1.0, 0.1, False)], min_similarity=0.3) == []
    assert threshold([], min_similarity=0.3) == []


def test_why_names_the_stronger_list() -> None:
    assert why(Scored(1, 0.5, 0.9, 0.1, 0.4, True)) == "keyword"
    assert why(Scored(1, 0.5, 0.1, 0.9, 0.6, True)) == "semantic"
    assert why(Scored(1, 0.5, 0.7, None, None, True)) == "keyword"


def test_rejections_apply_to_close_queries_only() -> None:
    r = [Rejection(7, ("deploy", "friday"), (1.0, 0.0, 0.0)), Rejection(8, ("cach", "redi"), None)]
    assert rejected(r, ["deploy"], (0.95, 0.31, 0.0)) == {7}  # cosine 0.95: close
    assert rejected(r, ["deploy"], (0.5, 0.86, 0.0)) == set()  # cosine 0.5: another question
    # without vectors on one side, shared lexemes decide
    assert rejected(r, ["cach", "redi"], None) == {8}
    assert rejected(r, ["cach", "redi", "evict", "polici"], None) == set()
    assert rejected(r, ["deploy", "friday"], None) == {7}


def test_expansion_adds_each_neighbour_once_in_hit_order() -> None:
    links = [
        graph.Link(2, 9, "depends_on", True),
        graph.Link(1, 5, "relates_to", False),
        graph.Link(1, 2, "relates_to", True),  # already a hit
        graph.Link(2, 5, "refines", True),  # already added through hit 1
        graph.Link(1, 6, "blocks", True),  # rejected for this query
    ]
    picked = pick_linked([1, 2], links, {6}, limit=3)
    assert [(other, link.hit) for other, link in picked] == [(5, 1), (9, 2)]
    assert picked[0][1].describe() == "this relates_to n_1"
    assert picked[1][1].describe() == "n_2 depends_on this"
    assert len(pick_linked([1, 2], links, set(), limit=1)) == 1


def test_snippet_is_short() -> None:
    assert snippet_of("one two three", words=2) == "one two …"
    assert snippet_of("a  b\nc") == "a b c"


def test_terms_split_words_phrases_and_negations() -> None:
    t = terms("'image-res' <-> 'imag' <-> 'resiz' & 'use' & !'helm' & 'kubernet'")
    assert t is not None
    # candidates: phrases loosened to AND (the index answers them without reading rows), minus negations
    assert t.every == "( 'image-res' & 'imag' & 'resiz' ) & ( 'use' ) & ( 'kubernet' ) & ! 'helm'"
    assert t.any == "( ( 'image-res' & 'imag' & 'resiz' ) | ( 'use' ) | ( 'kubernet' ) ) & ! 'helm'"
    # ranking: any word, phrases intact
    assert t.rank == "( 'image-res' <-> 'imag' <-> 'resiz' ) | ( 'use' ) | ( 'kubernet' )"
    either = terms("'deploy' & 'make' <2> 'ship' | ( 'helm' | 'argo''s' )")
    assert (
        either is not None
        and either.every == "( 'deploy' ) & ( 'make' & 'ship' ) & ( ( 'helm' | 'argo''s' ) )"
    )
    assert terms("") is None and terms("!'friday'") is None  # only stopwords, or only exclusions


def test_each_unit_gets_its_own_pool_query_without_rows_already_pooled() -> None:
    t = terms("'rare' & 'make' <-> 'ship' & !'helm'")
    assert t is not None and t.units == ("'rare'", "'make' <-> 'ship'")
    first, second = t.each(["'make' <-> 'ship'", "'rare'"])  # rarest first, as the store orders them
    assert first == f"( 'make' & 'ship' ) & !( {t.every} ) & ! 'helm'"
    assert second == f"( 'rare' ) & !( {t.every} ) & !( 'make' & 'ship' ) & ! 'helm'"


def test_rare_words_weigh_more_and_phrases_count_as_their_rarest_word() -> None:
    assert idf(0, 100) > idf(5, 100) > idf(50, 100) > idf(100, 100) >= 0
    assert idf(7, 3) >= 0  # counts that lag behind never go negative
    assert lexemes("'caroline' <-> 'o''brien'") == ["caroline", "o'brien"]
    weights = unit_weights(["'caroline'", "'sunflow'", "'new' <-> 'york'"], {"caroline": 60, "new": 30}, 100)
    assert [u for u, _ in weights] == ["'sunflow'", "'new' <-> 'york'", "'caroline'"]  # 'york': never seen
    assert weights[0][1] == pytest.approx(idf(0, 100)) and weights[1][1] == pytest.approx(idf(0, 100))


def test_a_named_period_lifts_its_notes_above_the_rest() -> None:
    fused = fuse([Candidate(1, 0.9), Candidate(2, 0.8), Candidate(3, 0.1)], [], min_similarity=0.3)
    assert [r.lineage for r in favour(fused, {3}, 0.5)][:1] == [1]  # a bonus, not a filter
    assert [r.lineage for r in favour(fused, {2}, 0.5)] == [2, 1, 3]
    assert [r.lineage for r in favour(fused, set(), 0.5)] == [1, 2, 3]


def test_a_second_model_is_a_third_signal_with_its_own_evidence() -> None:
    keyword = [Candidate(1, 0.6), Candidate(2, 0.3)]
    vector = [Candidate(2, 0.9), Candidate(3, 0.5)]
    second = [Candidate(4, 0.9), Candidate(3, 0.85)]
    two = {r.lineage: r.score for r in fuse(keyword, vector, min_similarity=0.3)}
    three = {
        r.lineage: r
        for r in fuse(keyword, vector, min_similarity=0.3, second=second, second_weight=0.2, second_min=0.8)
    }
    assert three[1].score == pytest.approx(0.8 * two[1])  # not among the second model's nearest
    assert three[3].score == pytest.approx(0.8 * two[3] + 0.2 * (0.85 - 0.8) / (0.9 - 0.8))
    assert three[4].score == pytest.approx(0.2) and three[4].second == 0.9 and not three[4].matched
    kept = threshold(list(three.values()), min_similarity=0.95, relative=0.0, second_min=0.88)
    assert {r.lineage for r in kept} == {1, 2, 4}  # 4: the second model's evidence; 3: none enough
