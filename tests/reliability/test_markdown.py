"""`lore import-markdown`: memory bank files and CLAUDE.md become notes, one per section, kinds from file
names (or headings), idempotent on re-import, a changed section revises its note, secrets refused."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from lore.store.markdown import infer_kind, sections
from reliability.conftest import Project
from reliability.fakes import fake_credentials

BANK = {
    "projectbrief.md": "# Project Brief\n\nacme-api serves the storefront.\n",
    "productContext.md": "# Product Context\n\n## Why\nShops need an API.\n\n## Users\nMerchants.\n",
    "systemPatterns.md": (
        "# System Patterns\n\n## Layers\nHandlers call services.\n\n```\n# not a heading\n```\n"
    ),
    "techContext.md": "# Tech Context\n\nPython 3.11, PostgreSQL 18.\n",
    "activeContext.md": "# Active Context\n\n## Now\nMigrating to uv.\n",
    "progress.md": "# Progress\n\n## What works\nCheckout.\n\n## What's left\nRefunds.\n",
    "decisions.md": "# Decisions\n\n## 2026-10 Use PostgreSQL\nOne database for everything.\n",
}
CLAUDE = (
    "# CLAUDE.md\n\n## Commands\n`make test` runs everything.\n\n"
    "## Architecture\nsrc/ layout.\n\n## Misc\nBe nice.\n"
)


@pytest.mark.parametrize(
    "name, kind",
    [
        ("projectbrief", "brief"),
        ("productContext", "product"),
        ("systemPatterns", "pattern"),
        ("techContext", "tech"),
        ("activeContext", "active"),
        ("progress", "progress"),
        ("decisions", "decision"),
        ("architecture", "pattern"),
        ("roadmap", "plan"),
        ("tasks", "task"),
        ("dev-setup", "devenv"),
        ("CLAUDE", None),
        ("AGENTS", None),
        ("known-issues", None),
    ],
)
def test_kind_from_the_file_name(name: str, kind: str | None) -> None:
    assert infer_kind(name) == kind


def test_sections_split_at_the_level_under_a_title_and_ignore_code_fences() -> None:
    found = sections(BANK["systemPatterns.md"], "memory-bank/systemPatterns.md")
    assert [(s.key, s.kind) for s in found] == [("Layers", "pattern")]
    assert "# not a heading" in found[0].body
    claude = sections(CLAUDE, "CLAUDE.md")
    assert [(s.title, s.kind) for s in claude] == [
        ("CLAUDE.md: Commands", "devenv"),
        ("CLAUDE.md: Architecture", "pattern"),
        ("CLAUDE.md: Misc", "note"),
    ]
    flat = sections("no headings at all\n\njust text", "notes.md")
    assert [(s.key, s.title, s.body) for s in flat] == [
        ("(top)", "notes.md", "no headings at all\n\njust text")
    ]
    repeated = sections("## A\none\n## A\ntwo\n", "x.md")
    assert [s.key for s in repeated] == ["A", "A #2"]


def test_a_huge_section_is_cut_into_parts_under_the_note_limit() -> None:
    body = "\n".join(f"line {i} " + "x" * 90 for i in range(1000))
    found = sections(f"# Progress\n\n## Log\n{body}\n", "progress.md")
    assert len(found) >= 3 and all(len(s.body.encode()) <= 32 * 1024 for s in found)
    assert found[1].key == "Log (part 2)"


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text)


def test_import_is_idempotent_and_updates_changed_sections(
    project: Project, conn: psycopg.Connection
) -> None:
    bank = project.dir / "memory-bank"
    bank.mkdir()
    _write(bank, BANK)
    (project.dir / "CLAUDE.md").write_text(CLAUDE)
    first = project.lore("import-markdown", ".")
    assert first.returncode == 0, first.stderr
    kinds: dict[str, str] = dict(
        conn.execute("SELECT title, kind FROM notes WHERE superseded_at IS NULL AND space = 'p'").fetchall()
    )
    assert kinds["Progress: What works"] == "progress" and kinds["Project Brief"] == "brief"
    assert kinds["Decisions: 2026-10 Use PostgreSQL"] == "decision"
    assert kinds["CLAUDE.md: Commands"] == "devenv"
    total = len(kinds)
    assert total == 12
    again = project.lore("import-markdown", ".")
    assert again.returncode == 0 and "0 new notes, 0 updated, 12 unchanged" in again.stdout
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (total,)
    (bank / "progress.md").write_text(BANK["progress.md"].replace("Checkout.", "Checkout and refunds."))
    changed = project.lore("import-markdown", "memory-bank")
    assert "0 new notes, 1 updated" in changed.stdout, changed.stdout
    versions = conn.execute(
        "SELECT body, superseded_at IS NULL FROM notes WHERE title = 'Progress: What works' "
        "ORDER BY version_id"
    ).fetchall()
    assert versions == [("Checkout.", False), ("Checkout and refunds.", True)]
    # a forgotten section's note is not brought back
    lineage = conn.execute("SELECT lineage FROM notes WHERE title = 'CLAUDE.md: Misc'").fetchone()
    conn.execute("UPDATE notes SET superseded_at = now() WHERE lineage = %s", lineage)
    conn.commit()
    kept = project.lore("import-markdown", "CLAUDE.md")
    assert "1 skipped (their notes were forgotten)" in kept.stdout, kept.stdout


def test_import_with_a_secret_writes_nothing(project: Project, conn: psycopg.Connection) -> None:
    bank = project.dir / "memory-bank"
    bank.mkdir()
    _write(bank, {**BANK, "techContext.md": f"# Tech\n\n## Keys\n{fake_credentials(9)['anthropic']}\n"})
    refused = project.lore("import-markdown", "memory-bank")
    assert refused.returncode == 1
    assert "memory-bank/techContext.md:4 Anthropic API key" in refused.stderr, refused.stderr
    assert "--allow-secret" in refused.stderr
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)
    allowed = project.lore("import-markdown", "memory-bank", "--allow-secret")
    assert allowed.returncode == 0, allowed.stderr


def test_a_file_named_like_a_credential_writes_nothing(project: Project, conn: psycopg.Connection) -> None:
    """A file's name becomes its notes' tag: a likely credential there is refused like one inside."""
    bank = project.dir / "memory-bank"
    bank.mkdir()
    key = fake_credentials(9)["anthropic"]
    _write(bank, {**BANK, f"{key}.md": "# Notes\n\n## Keys\nkept elsewhere\n"})
    refused = project.lore("import-markdown", "memory-bank")
    assert refused.returncode == 1, refused.stderr
    assert "memory-bank/(a file whose name holds it) Anthropic API key" in refused.stderr, refused.stderr
    assert key.split("=")[1] not in refused.stderr
    assert conn.execute("SELECT count(*) FROM notes").fetchone() == (0,)


def test_nothing_to_import_says_so(project: Project) -> None:
    empty = project.lore("import-markdown", str(project.dir))
    assert empty.returncode == 1 and "No .md files" in empty.stderr
