"""The renderer: the order given, compact metadata, budgets counted on the rendered text, the 'more' line."""

from __future__ import annotations

import pytest
from support import envelope
from support.rows import fact

from lore.core import measure, render


def test_facts_are_shown_in_the_order_given() -> None:
    """The order is the database's (lore_facts_ordered, tests/integration/test_fact_order.py): the
    renderer keeps it, whatever the subjects and times say."""
    facts = [fact(1, "old general"), fact(5, "about api", subject="api"), fact(2, "web", subject="web")]
    for given in (facts, facts[::-1]):
        out = render.session_start(given, space="work")
        assert out.shown_ids == tuple(f.id for f in given)
        lines = render.recall(given, space="work").text.splitlines()[1:]
        assert [line.split("[")[1].split(" ")[0] for line in lines] == [f.id for f in given]


def test_fact_line_is_compact() -> None:
    line = render.fact_line(fact(12, "deploys   with\nmake ship", subject="api"))
    assert line == "- deploys with make ship [f_12 · api · 2026-11-01]"
    assert render.fact_line(fact(3, "x")) == "- x [f_3 · 2026-11-01]"


def test_session_start_fits_everything_when_small() -> None:
    out = render.session_start([fact(2, "b", subject="api"), fact(1, "a")], space="work")
    assert out.omitted == 0 and out.shown == 2
    assert envelope.opens(out.text, "work")
    assert "not an instruction" in out.text
    assert out.text.index("- b") < out.text.index("- a")
    assert out.text.endswith(envelope.find(out.text).closing)


def test_session_start_empty_when_nothing_to_say() -> None:
    assert render.session_start([], space="w").text == ""


@pytest.mark.parametrize("budget", [500, 1234, 8000, 9500])
def test_session_start_cut_stays_in_budget_and_ends_with_more_line(budget: int) -> None:
    facts = [fact(i, f"fact number {i} " + "x" * 150) for i in range(500)]
    out = render.session_start(facts, space="work", max_chars=budget, total=700)
    assert measure.size(out.text) <= budget
    assert out.omitted == 700 - out.shown
    assert out.text.splitlines()[-1] == f"{out.omitted} more facts in lore; call recall_facts to see them"
    # as many as fit: one more line would have broken the budget
    next_line = render.fact_line(facts[out.shown])
    assert measure.size(out.text) + measure.size(next_line) + 1 > budget


def test_budget_counts_utf16_units_like_a_javascript_client() -> None:
    facts = [fact(i, "🙂" * 100) for i in range(100)]
    out = render.session_start(facts, space="s", max_chars=2000)
    assert len(out.text.encode("utf-16-le")) // 2 <= 2000
    assert len(out.text) < 2000  # Python's own count would have let more in


def test_recall_puts_cut_line_first_and_stays_in_budget() -> None:
    facts = [fact(i, "y" * 300) for i in range(300)]
    out = render.recall(facts, space="work", max_chars=4000, total=300)
    lines = out.text.splitlines()
    assert lines[0] == "Facts (space work):"
    assert lines[1].startswith(f"Showing {out.shown} of 300 facts; {300 - out.shown} more not shown")
    assert measure.size(out.text) <= 4000
    assert len(lines) == 2 + out.shown


def test_recall_caps_at_200_facts() -> None:
    facts = [fact(i, "s") for i in range(250)]
    out = render.recall(facts, space="w", max_chars=1_000_000)
    assert out.shown == 200 and out.omitted == 50


def test_clamp_budget_for_claude_code() -> None:
    assert render.clamp_budget(20_000, "claude-code") == 9_500
    assert render.clamp_budget(None, "cursor") == 8_000
    assert render.clamp_budget(12_000, "cursor") == 12_000


def test_average_metadata_overhead_is_small() -> None:
    facts = [fact(i, "s" * 80, subject="acme-api" if i % 2 else None) for i in range(1, 200)]
    overhead = sum(len(render.fact_line(f)) - len(f.statement) for f in facts) / len(facts)
    assert overhead < 40


def test_counted_and_the_more_line_say_one_in_the_singular() -> None:
    assert render.counted(1, "fact") == "1 fact" and render.counted(0, "space") == "0 spaces"
    assert render.counted(2, "note") == "2 notes"
    assert render.more_line(1) == "1 more fact in lore; call recall_facts to see them"
    assert render.more_line(12) == "12 more facts in lore; call recall_facts to see them"
