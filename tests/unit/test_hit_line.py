"""A search hit's line has one renderer (lore.core.ranking.Hit.line): the search_notes tool shows
it from the hit, `lore search` from the hit's JSON (the gateway's answer); both say `linked: …` for
a linked hit. Before, the tool wrote `linked: n_3 depends_on this` and the command line
`n_3 depends_on this`."""

from __future__ import annotations

import json
from dataclasses import asdict

from lore.core.ranking import Hit


def test_a_linked_hit_reads_the_same_from_the_tool_and_from_its_json() -> None:
    hit = Hit("n_2", "note", "Changelog", "what changed", 0.5, "linked", via="n_1 depends_on this")
    sent = json.loads(json.dumps({k: v for k, v in asdict(hit).items() if v is not None}))
    assert hit.line() == Hit.of(sent).line()
    assert hit.line() == "n_2 [note] Changelog — what changed (0.5, linked: n_1 depends_on this)"


def test_similar_and_when_survive_the_json_form() -> None:
    hit = Hit("n_4", "decision", None, "use uv", 1.0, "keyword", similar=("n_5", "n_6"), when="2026-01-02")
    sent = json.loads(json.dumps(asdict(hit)))
    assert Hit.of({**sent, "extra": 1}) == hit
    assert hit.line() == "n_4 [decision, 2026-01-02] use uv (1, keyword, +2 similar: n_5, n_6)"
