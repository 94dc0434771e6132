"""What `lore tidy` lists (lore.core.tidy) and what a session start leaves out (lore.core.session_start):
pure, no database."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from lore.core import session_start, tidy
from lore.core.config import Config, SpaceConfig
from lore.core.rows import Fact, Note
from lore.core.session import build
from lore.core.workspace import WorkspaceSignal

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def fact(lineage: int, statement: str, subject: str | None = "proj", workspace: str | None = None) -> Fact:
    return Fact(lineage, lineage, "w", NOW, None, "cli", workspace, statement, subject, NOW, None)


def note(lineage: int, body: str) -> Note:
    return Note(lineage, lineage, "w", NOW, None, "cli", None, "decision", None, body, [])


FACTS = [
    fact(5, "The parser lives in src/old_parser.py", None, "/nowhere"),
    fact(4, "Deploys go to Render, not fly.io anymore"),
    fact(3, "Deploys go to fly.io"),
    fact(2, "The tests are run with 'make test' and need chromium"),
    fact(1, "Tests run with make test; they need Chromium."),
]
NOTES = [
    note(2, "We decided to use pnpm for the web app, since npm was too slow"),
    note(1, "We decided to use pnpm for the web app because npm was slow"),
]


def test_duplicates_conflicts_and_stale_items_each_with_their_acts() -> None:
    report = tidy.build(
        "w",
        FACTS,
        NOTES,
        gone=lambda item: ["src/old_parser.py"] if item.id == "f_5" else [],
        unused=["n_1"],
        expired=2,
    )
    assert [[e.id for e in c.items] for c in report.duplicates] == [["f_2", "f_1"], ["n_2", "n_1"]]
    assert [(k.newer.id, k.older.id) for k in report.conflicts] == [("f_4", "f_3")]
    assert [(s.entry.id, s.reason) for s in report.stale] == [
        ("f_5", "names src/old_parser.py, which is gone"),
        ("n_1", "neither shown at a session start nor returned by a search in 60 days"),
    ]
    shown = tidy.text(report)
    assert "lore tidy merge f_2 f_1" in shown and "lore tidy forget f_3" in shown
    assert "2 facts stopped being true" in shown and "Unused items are not flagged" in shown
    data = json.loads(json.dumps(report.as_json()))
    assert data["conflicts"][0]["merge"] == "lore tidy merge f_4 f_3" and data["expired"] == 2


def test_what_was_kept_or_confirmed_is_not_listed_again() -> None:
    report = tidy.build(
        "w",
        FACTS,
        NOTES,
        kept=[frozenset({"f_1", "f_2"}), frozenset({"n_1", "n_2", "n_9"})],
        superseded={"f_3": "f_4"},
    )
    assert report.duplicates == [] and report.conflicts == []
    assert [(s.entry.id, s.reason) for s in report.stale] == [
        ("f_3", "replaced by f_4 (an agent confirmed it)")
    ]
    clean = tidy.build("w", FACTS[3:4], [], unused_checked=True)
    assert clean.clean and "Nothing to tidy" in tidy.text(clean)


def test_a_session_start_shows_each_fact_once_and_counts_what_it_left_out(tmp_path: Path) -> None:
    repo = tmp_path / "proj"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    config = Config(None, "w", (SpaceConfig("w"),))
    here = build(WorkspaceSignal(repo, "test"), config, {}, "cli")
    snap = session_start.Snapshot(
        [fact(6, "The CLI entry point is src/cli.py", "proj", str(repo)), *FACTS],
        total=6,
        superseded=frozenset({"f_3"}),
        expired=1,
    )
    kept = session_start.tidied(snap, here)
    # about the workspace first, newest first; f_5 was written from a folder that is gone, and the
    # session's repository has a src/ without its file: gone
    assert [f.id for f in kept.facts] == ["f_4", "f_2"]
    assert kept.notes == {2: "(+1 similar: f_1)"}
    assert (kept.hidden, kept.replaced, kept.paths_gone) == (1, 1, 2)
    text = session_start.compose(snap, here, config, "claude-code").text
    assert "src/cli.py" not in text and "f_5" not in text  # gone here too, wherever it was written
    assert "Left out: 1 fact replaced by a newer one, 2 facts naming files that are gone" in text
    assert "1 fact stopped being true in the last 30 days" in text
    # a small budget: only the facts it can show are looked at
    small = session_start.tidied(snap, here, max_chars=60)
    assert [f.id for f in small.facts] == ["f_4"]
