"""lore.core.admission without a database: each verdict (refused, copy, named, accepted), for facts,
notes and revisions, with the words users are given."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.rows import fact, note

import lore
from lore.core import admission
from lore.core.admission import Accepted, Copy, Named, Refusal
from lore.core.errors import InvalidInput, Refused

T0 = datetime(2026, 3, 1, tzinfo=UTC)
T1 = datetime(2026, 4, 1, tzinfo=UTC)
TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a GitHub classic token's shape (made up)


# --- reading the arguments: shape is refused before any work


def test_shape_is_refused_as_the_arguments_are_read() -> None:
    with pytest.raises(InvalidInput, match="statement"):
        admission.fact("")
    with pytest.raises(InvalidInput, match="statement"):
        admission.fact("x" * 1_001)
    with pytest.raises(InvalidInput, match="valid_from"):
        admission.fact("CI runs on push", valid_from="next tuesday-ish")
    with pytest.raises(InvalidInput, match="Nothing to change in f_4"):
        admission.fact(revising=4)
    with pytest.raises(InvalidInput, match="kind"):
        admission.note("a body", kind="no such kind")
    assert admission.fact("CI runs on push", "acme", "2026-03-01").valid_from == T0
    assert admission.fact(subject="acme-api", revising=4).statement is None  # a revision: any one field


# --- refused


def test_a_credential_is_refused_unless_a_person_allowed_it() -> None:
    refused = admission.admit(admission.fact(f"CI pushes with {TOKEN}"))
    assert isinstance(refused, Refusal) and isinstance(refused.error, Refused)
    assert "fact's statement looks like it holds a credential" in refused.error.message
    assert TOKEN not in refused.error.message  # never echoed back
    assert 'lore facts add "…" --allow-secret' in refused.error.hint
    in_title = admission.admit(admission.note("setup", title=TOKEN))
    assert isinstance(in_title, Refusal) and "note's title" in in_title.error.message
    allowed = admission.admit(admission.fact(f"CI pushes with {TOKEN}", allow_secret=True))
    assert isinstance(allowed, Accepted)


def test_a_fact_valid_until_before_it_starts_is_refused() -> None:
    refused = admission.admit(admission.fact("the freeze", valid_from="2026-04-01", valid_to="2026-03-01"))
    assert isinstance(refused, Refusal)
    assert (
        refused.error.message.startswith("valid_to (2026-03-01")
        and "is not after valid_from" in refused.error.message
    )
    assert refused.error.hint.startswith("Give a valid_to later than valid_from")
    old = fact(3, "the freeze", valid_from=T0, valid_to=T1)
    moved = admission.admit(admission.fact(valid_from="2026-05-01", revising=3), revising=old)
    assert (
        isinstance(moved, Refusal) and "is not after valid_from" in moved.error.message
    )  # against the kept valid_to


def test_a_revision_that_changes_nothing_is_refused() -> None:
    old = fact(3, "CI runs on push", "acme")
    same = admission.admit(admission.fact("CI runs on push", revising=3), revising=old)
    assert isinstance(same, Refusal)
    assert same.error.message == "Nothing to change: f_3 already says exactly that."
    assert "statement, subject, valid_from or valid_to" in same.error.hint
    assert isinstance(admission.admit(admission.fact(subject="acme-api", revising=3), revising=old), Accepted)
    kept = note(5, "Rotate the keys monthly", title="Keys")
    again = admission.admit(admission.note("Rotate the keys monthly", title="Keys"), revising=kept)
    assert isinstance(again, Refusal) and again.error.hint == admission.SAME_NOTE_HINT
    other = admission.admit(
        admission.note("Rotate the keys monthly", kind="devenv", title="Keys"), revising=kept
    )
    assert isinstance(other, Accepted)


# --- an exact copy: nothing written


def test_an_exact_copy_names_the_one_already_there() -> None:
    there = fact(7, "Deploys go to fly.io", "acme-api")
    copy = admission.admit(admission.fact("Deploys  go to fly.io", "acme-api"), [fact(6, "x"), there])
    assert copy == Copy(there)
    kept = note(8, "Run make test before pushing", title="Tests")
    assert admission.admit(admission.note("Run make test before pushing", title="Tests"), [kept]) == Copy(
        kept
    )


def test_the_same_words_at_other_valid_times_are_a_new_fact_named_as_similar() -> None:
    there = fact(7, "The freeze holds", valid_from=T0, valid_to=T1)
    later = admission.admit(admission.fact("The freeze holds", valid_to="2026-06-01"), [there])
    assert isinstance(later, Named) and later.found.similar == (there,)


def test_a_copy_wins_over_a_credential_as_it_does_today() -> None:
    there = fact(9, f"CI pushes with {TOKEN}")  # stored deliberately by a person
    assert admission.admit(admission.fact(f"CI pushes with {TOKEN}"), [there]) == Copy(there)


# --- named candidates: written, and named


def test_near_duplicates_and_conflicts_are_named() -> None:
    fly = fact(1, "acme-api deploys to fly.io", "acme-api")
    render = admission.fact("acme-api deploys to render.com", "acme-api")
    clash = admission.admit(render, [fly])
    assert isinstance(clash, Named) and clash.found.conflicts == (fly,)
    port = note(2, "The dev server listens on port 8080")
    near = admission.admit(admission.note("The dev server listens on port 8080 locally"), [port])
    assert isinstance(near, Named) and near.found.similar == (port,)


def test_a_restatement_is_named_by_meaning() -> None:
    old = fact(4, "Staging is refreshed every Monday night", "acme")
    said = admission.fact("We reset the pre-production copy weekly", "acme")
    named = admission.admit(said, [old], cosines={old.version_id: 0.95})
    assert isinstance(named, Named) and named.found.likely == (old,)
    assert isinstance(admission.admit(said, [old], cosines={old.version_id: 0.1}), Accepted)


def test_a_number_is_read_as_its_value_when_naming_by_meaning() -> None:
    """`60 ns` and `60ns`, `V2` and `2` are one value: a restatement that writes its number another
    way is still named; two different values still are not."""
    for old_text, new_text in [
        ("tqdm adds about 60 ns per iteration", "The overhead of tqdm is roughly 60ns an iteration"),
        ("Pydantic V2 is required", "The code needs pydantic 2 or later"),
    ]:
        old = fact(5, old_text, "cli")
        named = admission.admit(admission.fact(new_text, "cli"), [old], cosines={old.version_id: 0.9})
        assert isinstance(named, Named) and named.found.likely == (old,), new_text
    for old_text, new_text in [
        ("The API returns 422 on a bad body", "The API returns 503 on a bad body"),
        ("The wheels are built for x86_64", "The wheels are built for arm64"),
    ]:
        old = fact(6, old_text, "api")
        got = admission.admit(admission.fact(new_text, "api"), [old], cosines={old.version_id: 0.99})
        assert not (isinstance(got, Named) and got.found.likely), new_text


# --- accepted


def test_nothing_alike_is_accepted() -> None:
    assert isinstance(admission.admit(admission.fact("CI runs on push")), Accepted)
    unrelated = [fact(1, "The laptop runs NixOS"), fact(2, "Dotfiles live in ~/dotfiles")]
    assert isinstance(admission.admit(admission.fact("CI runs on push"), unrelated), Accepted)
    assert isinstance(
        admission.admit(admission.note("A first note"), [note(1, "Lunch is at noon")]), Accepted
    )


def test_the_store_only_writes_what_was_admitted() -> None:
    """No refusal of a fact or a note is decided in the store (docs/design.md, What lore refuses)."""
    store = Path(lore.__file__).parent / "store"
    for name in ("facts.py", "notes.py"):
        source = (store / name).read_text()
        assert "secrets" not in source and "InvalidInput" not in source, name
