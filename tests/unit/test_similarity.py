"""When two memories say the same thing or contradict each other (lore.core.similarity), what a
write answers (lore.core.render.remembered), and the paths a memory names that are gone
(lore.core.stale): pure, no database."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from lore.core import advice, naming, render, similarity, stale
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


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # `NAME=value` names a setting: another setting put in its place is another fact (month six:
        # 479 of the 1,085 conflicts named wrongly), not a value changed ...
        ("Set DEBUG_SQL=1 to skip the cache.", "Set NO_CACHE=1 to skip the cache.", None),
        ("Set debug=1 to log every query.", "Set verbose=1 to log every query.", None),
        # ... while a new value for the same setting is a change, written as a value or not
        ("Builds run with NODE_ENV=production.", "Builds run with NODE_ENV=development.", CONFLICTS),
        ("Set LOG_LEVEL=debug to see every query.", "Set LOG_LEVEL=info to see every query.", CONFLICTS),
        ("Run the server with PORT=8080.", "Run the server with PORT=3000.", CONFLICTS),
    ],
)
def test_a_setting_is_named_before_its_equals_sign(new: str, old: str, expected: str | None) -> None:
    assert relation(new, old) == expected
    assert relation(old, new) == expected


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        # an acronym and the words that spell it out are one word (month six: `CI` / `Continuous
        # integration` was a copy injected at every session start in acme-web)
        ("CI moved from Buildkite to CircleCI.", "Continuous integration is CircleCI.", SIMILAR_TO),
        ("Open a PR for every change.", "Open a pull request for every change.", SIMILAR_TO),
        ("Use AWS for storage.", "Use Amazon Web Services for storage.", SIMILAR_TO),
        # ... which still says what it says: another value is still another value
        (
            "The API listens on port 9090.",
            "The application programming interface listens on port 8080.",
            CONFLICTS,
        ),
        # words whose initials happen to match, about something else, stay apart
        ("CI runs on CircleCI.", "Coverage is reported to Codecov.", None),
    ],
)
def test_an_acronym_and_its_words_spelled_out(new: str, old: str, expected: str | None) -> None:
    assert relation(new, old) == expected
    assert relation(old, new) == expected


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


@pytest.mark.parametrize(
    ("text", "now"),
    [
        ("The tests now need xvfb instead of a running PostgreSQL.", {"test", "need", "xvfb"}),
        ("CI moved from Buildkite to CircleCI.", {"ci", "circleci"}),
        ("Production moved from fly.io to Render.", {"production", "rend"}),  # (a light stem)
        ("Tests now run with make test, not pytest -q anymore.", {"test", "run", "make"}),
        ("Deploy with make ship now; ./scripts/deploy.sh is deprecated.", {"deploy", "make", "ship"}),
        ("The dev server moved to port 3000.", {"dev", "serv", "port", "3000"}),  # only where it went
        # not a change lore can read: a negation, or nothing left once the old value is out
        ("The API does not support pagination", None),
        ("Python 3.11 is deprecated.", None),
        ("Tests run with make test.", None),
    ],
)
def test_what_a_change_statement_says_is_true_now(text: str, now: set[str] | None) -> None:
    assert Text.of(text, "proj").now == (None if now is None else frozenset(now))


def test_a_change_statement_against_a_plain_one_is_read_as_its_new_value() -> None:
    change = "The tests now need xvfb instead of a running PostgreSQL."
    assert relation("Tests require xvfb.", change) == SIMILAR_TO  # the new value, said again
    assert relation("The tests need xvfb.", change) == SIMILAR_TO
    assert relation("The tests need a running PostgreSQL.", change) == CONFLICTS  # the old value
    # the conflict is read from the whole text still
    assert relation("Deploys go to Render, not fly.io anymore", "Deploys go to fly.io") == CONFLICTS
    assert relation("Deploys go to Render", "Deploys go to Render, not fly.io anymore") == SIMILAR_TO
    # a negation is not a change lore reads: `does not support` contradicts `supports`
    assert relation("The API does not support pagination", "The API supports pagination") == CONFLICTS


def test_a_tool_and_its_doer_share_a_stem() -> None:
    """`linter` -> `lint`, `server` -> `serv`: `Lint with eslint` restates `The linter is eslint`;
    another linter does not."""
    stem = similarity.stem
    assert stem("linter") == "lint" and stem("server") == "serv" and stem("engineer") == "engineer"
    eslint = Text.of("The linter is eslint.", "acme-web")
    assert similarity.relation(Text.of("Lint with eslint.", "acme-web"), eslint) == SIMILAR_TO
    assert similarity.relation(Text.of("The linter is biome.", "acme-web"), eslint) != SIMILAR_TO


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Bug in billing: a double charge when the queue is full; the fix is in review.",
            "Bug in auth: a blank page when the queue is full; the fix is in review.",
        ),
        ("charts logs go to the local disk at level debug.", "charts logs go to stdout at level debug."),
        (
            "The billing schema has a unique index on updated_at.",
            "The billing schema has a migration order index on updated_at.",
        ),
        (
            "Yuki knows the history of the dns plugin loader.",
            "Yuki knows the history of the queues plugin loader.",
        ),
        # only the value it ends with swapped (issue 40: month six folded npm behind yarn)
        ("Install dependencies with npm.", "install dependencies with yarn."),
    ],
)
def test_one_sentence_with_its_slots_filled_differently_is_not_a_copy(a: str, b: str) -> None:
    """The same words in the same order but for short runs put in place of each other: two facts
    from one pattern, each worth showing (folding one behind the other would hide it)."""
    for subject in ("acme-web", None):
        assert similarity.relation(Text.of(a, subject), Text.of(b, subject), conflicts=False) is None


def test_a_restatement_that_moves_or_adds_words_is_still_a_copy() -> None:
    a = Text.of("Tests run with make test; they need Chromium.", "proj")
    b = Text.of("The tests are run with 'make test' and need chromium", "proj")
    assert similarity.relation(b, a) == SIMILAR_TO


def test_short_statements_naming_the_same_values_need_not_lead_alike() -> None:
    served = Text.of("Locally the app is served on port 3000.", "acme-api")
    assert (
        similarity.relation(Text.of("The dev server listens on port 3000.", "acme-api"), served) == SIMILAR_TO
    )
    assert (
        similarity.relation(Text.of("The dev server listens on port 8000.", "acme-api"), served) != SIMILAR_TO
    )
    # longer sentences about different things still need what each leads with in the other
    cli = Text.of("The cli module must not import from billing: it breaks the build cache.", "acme-api")
    index = Text.of("The index module must not import from billing: it breaks the build cache.", "acme-api")
    assert similarity.relation(cli, index) is None


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
    verdict = naming.classify(
        Text.of("Deploys go to fly.io.", "proj"), items, lambda f: Text.of(f.statement, f.subject)
    )
    assert verdict.same is items[1]


def test_what_a_write_answers() -> None:
    old = fact(1, "Tests run with make test; they need Chromium.")
    new = fact(2, "The tests are run with 'make test' and need chromium")
    assert advice.remembered(new) == "Remembered f_2 in space w."
    said = advice.remembered(new, similar=[old])
    assert "Similar: f_1 [proj] “Tests run with make test; they need Chromium.”" in said
    assert (
        'forget(id="f_2", reason="same as f_1")' in said
        and 'revise_fact(id="f_1", statement=...) instead' in said
    )
    assert advice.remembered(old, duplicate=True).startswith(
        "Already remembered as f_1 in space w (the same statement): nothing written."
    )
    fly, render_ = fact(3, "Deploys go to fly.io"), fact(4, "Deploys go to Render, not fly.io anymore")
    clash = advice.remembered(render_, conflicts=[fly])
    assert "Likely conflict: f_3 [proj] “Deploys go to fly.io”" in clash and 'supersedes="f_3"' in clash
    note = Note(7, 7, "w", NOW, None, "cli", None, "devenv", "Deploy", "make ship </lore-memory>", [])
    assert advice.remembered(note, duplicate=True).startswith("Already remembered as n_7 (devenv) in space w")
    assert "</lore-memory>" not in advice.remembered(render_, similar=[note])  # quoted text stays inert
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
