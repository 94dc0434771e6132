"""When two memories say the same thing or contradict each other (lore.core.similarity), what a
write answers (lore.core.render.remembered), and the paths a memory names that are gone
(lore.core.stale): pure, no database."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lore.core import render, similarity, stale
from lore.core.rows import Fact, Note
from lore.core.similarity import CONFLICTS, SAME, SIMILAR_TO, Text

NOW = datetime(2026, 12, 3, tzinfo=UTC)


def fact(lineage: int, statement: str, subject: str | None = "proj", workspace: str | None = None) -> Fact:
    return Fact(lineage, lineage, "w", NOW, None, "cli", workspace, statement, subject, NOW, None)


def relation(
    new: str, old: str, new_subject: str | None = "proj", old_subject: str | None = "proj"
) -> str | None:
    return similarity.relation(Text.of(new, new_subject), Text.of(old, old_subject))


def test_the_same_words_whatever_the_case_spacing_and_punctuation() -> None:
    assert similarity.key("Tests run with `make test`;  they need Chromium.") == similarity.key(
        "tests run with make test - They need chromium"
    )
    assert (
        relation(
            "Tests run with make test; they need Chromium.", "tests run with MAKE TEST they need chromium"
        )
        == SAME
    )
    # the same words about another subject are another fact
    assert relation("Tests run with make test.", "Tests run with make test.", "api", "web") is None


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # the restatement: the same content words once stopwords and plurals are set aside
        (
            "The tests are run with 'make test' and need chromium",
            "Tests run with make test; they need Chromium.",
            SIMILAR_TO,
        ),
        ("Deploys go to Render, not fly.io anymore", "Deploys go to fly.io", CONFLICTS),  # a change word
        ("Deploys go to Render", "Deploys go to fly.io", CONFLICTS),  # one value put in place of another
        ("The API listens on port 9090", "The API listens on port 8080", CONFLICTS),  # numbers swapped
        ("The dev server listens on port 8080 locally", "The dev server listens on port 8080", SIMILAR_TO),
        # different things that share most words: what each leads with is not in the other
        ("The cli module must not import from sync", "The index module must not import from sync", None),
        ("Tests require xvfb.", "Deploys go to fly.io", None),
    ],
)
def test_near_duplicates_and_likely_conflicts(new: str, old: str, expected: str | None) -> None:
    assert relation(new, old) == expected


def test_short_statements_naming_the_same_values_about_one_subject() -> None:
    same, changed = "The project runs on Python 3.13.", "The project runs on Python 3.12."
    assert relation("acme-api targets Python 3.13.", same, "acme-api", "acme-api") == SIMILAR_TO
    assert relation("acme-api targets Python 3.13.", changed, "acme-api", "acme-api") is None
    assert relation("acme-api targets Python 3.13.", same, None, None) is None  # no subject to go by


def test_without_a_subject_more_words_must_match_and_notes_never_conflict() -> None:
    a, b = (
        "Tests run with make test and need Chromium",
        "Tests run with make test, they need Chromium and Docker",
    )
    assert similarity.overlap(Text.of(a), Text.of(b)) == pytest.approx(5 / 6)
    assert relation(a, b) == SIMILAR_TO and relation(a, b, None, None) == SIMILAR_TO
    looser = ("Lint and format the code with ruff", "Lint with ruff")
    assert relation(*looser) == SIMILAR_TO  # 2 of 4 words: enough with a subject...
    assert relation(*looser, None, None) is None  # ...not without one
    assert (
        similarity.relation(Text.of("Deploys go to Render"), Text.of("Deploys go to fly.io"), conflicts=False)
        is None
    )


def test_folding_keeps_the_first_of_each_and_lists_what_it_may_contradict() -> None:
    items = [
        fact(4, "Deploys go to Render, not fly.io anymore"),
        fact(3, "Deploys go to fly.io"),
        fact(2, "The tests are run with 'make test' and need chromium"),
        fact(1, "Tests run with make test; they need Chromium."),
        fact(5, "It is."),
        fact(6, "it is"),
    ]
    groups = similarity.collapse(items, lambda f: Text.of(f.statement, f.subject), conflicts=True)
    assert [(g.item.id, [x.id for x in g.similar], [x.id for x in g.conflicts]) for g in groups] == [
        ("f_4", [], []),
        ("f_3", [], ["f_4"]),
        ("f_2", ["f_1"], []),
        ("f_5", ["f_6"], []),  # no content word at all: only its exact copy folds into it
    ]
    verdict = similarity.classify(
        Text.of("Deploys go to fly.io.", "proj"), items, lambda f: Text.of(f.statement, f.subject)
    )
    assert verdict.same is items[1]


def test_what_a_write_answers() -> None:
    old = fact(1, "Tests run with make test; they need Chromium.")
    new = fact(2, "The tests are run with 'make test' and need chromium")
    assert render.remembered(new) == "Remembered f_2 in space w."
    said = render.remembered(new, similar=[old])
    assert "Similar: f_1 [proj] “Tests run with make test; they need Chromium.”" in said
    assert 'forget f_2 (reason "same as f_1")' in said and "revise_fact f_1 instead" in said
    assert render.remembered(old, duplicate=True).startswith(
        "Already remembered as f_1 in space w (the same statement): nothing written."
    )
    fly, render_ = fact(3, "Deploys go to fly.io"), fact(4, "Deploys go to Render, not fly.io anymore")
    clash = render.remembered(render_, conflicts=[fly])
    assert "Likely conflict: f_3 [proj] “Deploys go to fly.io”" in clash and 'supersedes="f_3"' in clash
    note = Note(7, 7, "w", NOW, None, "cli", None, "devenv", "Deploy", "make ship </lore-memory>", [])
    assert render.remembered(note, duplicate=True).startswith("Already remembered as n_7 (devenv) in space w")
    assert "</lore-memory>" not in render.remembered(render_, similar=[note])  # quoted text stays inert
    assert render.tidy_line(1, 2, 3) == (
        "Left out: 1 fact replaced by a newer one, 2 facts naming files that are gone "
        "(`lore tidy` lists them). 3 facts stopped being true in the last 30 days (valid_to passed)."
    )
    assert render.tidy_line(0, 0, 0) is None
    assert render.similar_note(["f_1", "f_2", "f_3", "f_4"], ["f_9"]) == (
        "(+4 similar: f_1, f_2, f_3, +1 more; may be contradicted by newer f_9)"
    )


def test_paths_a_memory_names_and_those_that_are_gone(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("")
    text = (
        "The parser is in src/app.py and src/old.py; see https://example.org/a/b, github.com/o/r, "
        f"docs/gone/, and/or 3/4, ../x/y, ~/notes/n.md, {repo}/src/zz.py and {tmp_path}/elsewhere/q.py"
    )
    assert stale.named_paths(text) == [
        "src/app.py", "src/old.py", "docs/gone/", "and/or", f"{repo}/src/zz.py", f"{tmp_path}/elsewhere/q.py"
    ]  # fmt: skip
    # written from a subfolder: its repository's top counts; `docs` does not exist there, `and` neither
    assert stale.gone(text, str(repo / "src"), None) == ["src/old.py", f"{repo}/src/zz.py"]
    # a repository that moved: the session's own repository is where its paths are looked up
    moved = tmp_path / "moved"
    repo.rename(moved)
    assert stale.gone("The code is in src/app.py", str(repo / "src"), str(moved)) == []
    assert stale.gone("The code is in src/app.py", str(repo / "src"), None) == []  # nowhere to look: unknown
    assert stale.gone("no path here", str(moved), str(moved)) == []
