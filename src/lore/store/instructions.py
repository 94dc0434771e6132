"""`lore import-instructions [DIR]`: the instruction files each agent reads (CLAUDE.md, AGENTS.md,
GEMINI.md, `.cursor/rules/*`, `.cursorrules`, `.github/copilot-instructions.md`,
`.github/instructions/*.instructions.md`, `.windsurfrules`, `.clinerules` and `.clinerules/*.md`),
in the folder and its subfolders, become notes of the workspace's space, one per section.

- Provenance: each section is recorded with its file (relative to the workspace), heading, lines
  and content hash (markdown_sections, migrations 0005 and 0010) and the file's family (below).
- Re-import is idempotent: an unchanged section is left alone, a changed one revises its note (the
  same n_ id), and a section that is no longer in its file, or whose file is gone, is forgotten
  with a reason saying so. A note forgotten by hand stays forgotten.
- Session start of a client lists the sections of the families it does not load itself (a Gemini
  session gets CLAUDE.md's sections, never GEMINI.md's): `lore.clients.ClientHook.loads`.
- The walk never follows a link, skips dependency and build folders (SKIP_DIRS), virtualenvs and
  other repositories inside the tree (FOREIGN_MARKERS), and reads at most MAX_FILES files; the files
  themselves are read as `import-markdown` reads them (markdown.read).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import psycopg

from lore.core.errors import InvalidInput
from lore.core.session import Origin
from lore.store import markdown, notes

FAMILIES = ("claude", "agents", "gemini", "cursor", "copilot", "windsurf", "cline")
# Folders that hold other people's files (dependencies, builds, caches), never the project's rules.
SKIP_DIRS = frozenset(
    [
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        "dist",
        "build",
        "target",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".next",
        ".cache",
        "vendor",
        # other people's code, by the folders package managers and build tools put it in
        "site-packages",
        "dist-packages",
        ".terraform",
        "Pods",
        "Carthage",
        "deps",
        "_deps",
        "third_party",
        "third-party",
        "bower_components",
        "jspm_packages",
        ".bundle",
        ".gradle",
        ".m2",
        ".cargo",
        ".yarn",
        ".pnpm-store",
    ]
)
# A folder holding one of these is another project's: a virtualenv (whatever its name), or another
# repository (a submodule, a clone inside the tree): its instruction files are not this one's.
FOREIGN_MARKERS = ("pyvenv.cfg", ".git")
MAX_DEPTH = 8
MAX_FILES = 200
TAG = "instructions"
# Session start: at most this many sections listed, each line at most LINE_CHARS.
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*(\n|\Z)", re.S)


def family_of(path: str) -> str | None:
    """The instruction file family of a path relative to the project, or None when it is not one."""
    parts = PurePosixPath(path).parts
    if not parts:
        return None
    name, parent = parts[-1], parts[-2] if len(parts) > 1 else ""
    grand = parts[-3] if len(parts) > 2 else ""
    if name in ("CLAUDE.md", "CLAUDE.local.md"):
        return "claude"
    if name == "AGENTS.md":
        return "agents"
    if name == "GEMINI.md":
        return "gemini"
    if name == ".cursorrules" or ((grand, parent) == (".cursor", "rules") and name.endswith((".mdc", ".md"))):
        return "cursor"
    if (parent, name) == (".github", "copilot-instructions.md"):
        return "copilot"
    if (grand, parent) == (".github", "instructions") and name.endswith(".instructions.md"):
        return "copilot"
    if name == ".windsurfrules" or ((grand, parent) == (".windsurf", "rules") and name.endswith(".md")):
        return "windsurf"
    if name == ".clinerules" or (parent == ".clinerules" and name.endswith(".md")):
        return "cline"
    return None


@dataclass(frozen=True)
class Found:
    """The instruction files under a folder: (path, key relative to the workspace, family), and
    those left out with the reason."""

    files: list[tuple[Path, str, str]]
    skipped: list[tuple[Path, str]]


def find(folder: Path, workspace: Path) -> Found:
    """Every instruction file in `folder` and its subfolders (not through links, not into SKIP_DIRS,
    at most MAX_DEPTH deep), in path order."""
    if folder.is_symlink() or not folder.is_dir():
        raise InvalidInput(
            f"{folder} is not a directory (or is a symbolic link).",
            "Pass the project folder itself (default: the workspace).",
        )
    root, base = folder.resolve(), workspace.resolve()
    files: list[tuple[Path, str, str]] = []
    skipped: list[tuple[Path, str]] = []
    for here, dirs, names in os.walk(root, followlinks=False):  # a linked folder is not entered
        depth = len(Path(here).relative_to(root).parts)
        dirs[:] = sorted(
            d for d in dirs if d not in SKIP_DIRS and depth < MAX_DEPTH and not _foreign(Path(here) / d)
        )
        for name in sorted(names):
            path = Path(here) / name  # the entry itself, a link not resolved: its key says where it is
            key = str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
            family = family_of(key)
            if family is None:
                continue
            why = markdown.unsafe(path, root)
            if why is not None:
                skipped.append((path, why))
            elif len(files) >= MAX_FILES:
                skipped.append((path, f"more than {MAX_FILES} instruction files; the rest were left out"))
            else:
                files.append((path, key, family))
    return Found(files, skipped)


def _foreign(folder: Path) -> bool:
    return any(os.path.lexists(folder / marker) for marker in FOREIGN_MARKERS)


def text_of(path: Path) -> str:
    """A file's text without the YAML front matter Cursor, Copilot and Cline rules start with (blank
    lines in its place, so that line numbers stay the file's own)."""
    return _FRONT_MATTER.sub(lambda m: "\n" * m.group(0).count("\n"), markdown.read(path), count=1)


@dataclass
class Imported:
    outcome: markdown.Outcome
    files: int
    removed: list[str] = field(default_factory=list)  # note ids forgotten: their section is gone
    root: str = ""  # the repository they were imported from

    def describe(self, space: str) -> str:
        return describe(self, space)


def apply(
    conn: psycopg.Connection,
    origin: Origin,
    root: str,
    found: Found,
    scope: str,
    *,
    allow_secret: bool = False,
) -> Imported:
    """Import `found` (file keys relative to the repository `root`) into `origin.space` in one
    transaction (secrets refuse the whole import), and forget the notes of this repository's
    instruction sections under `scope` (a folder relative to `root`, "" for all of it) that are no
    longer there. Sections of other repositories of the space are never touched.

    Sections imported before they were keyed by their repository (migration 0013 gave them the
    folder the import ran from, `root_guessed`) from `root` or a folder inside it are adopted first:
    their file was already relative to the repository's top-level, so only `root` changes (unless
    the repository has that key already: then the row stays as it is, and its note with it)."""
    sections: list[markdown.Section] = []
    families: dict[str, str] = {}
    for path, key, family in found.files:
        sections.extend(markdown.sections(text_of(path), key))
        families[key] = family
    present = {(s.file, s.key) for s in sections}
    with conn.transaction():
        conn.execute(_ADOPT, {"space": origin.space, "root": root})
        outcome = markdown.apply(
            conn, origin, root, sections, allow_secret=allow_secret, families=families, tag=TAG
        )
        imported = Imported(outcome, len(found.files), root=root)
        rows = conn.execute(
            "SELECT file, section, lineage FROM markdown_sections "
            "WHERE space = %s AND root = %s AND family IS NOT NULL FOR UPDATE",
            (origin.space, root),
        ).fetchall()
        for file, section, lineage in rows:
            inside = not scope or file == scope or file.startswith(scope.rstrip("/") + "/")
            if not inside or (file, section) in present:
                continue
            gone = "is gone" if not any(key == file for _, key, _ in found.files) else "no longer has it"
            reason = f"lore import-instructions: section {section!r} of {file} in {root}: the file {gone}"
            current = conn.execute(
                "SELECT 1 FROM notes WHERE lineage = %s AND superseded_at IS NULL", (lineage,)
            ).fetchone()
            if current:
                notes.forget(conn, origin, [origin.space], int(lineage), reason[:500])
                imported.removed.append(f"n_{lineage}")
            conn.execute(
                "DELETE FROM markdown_sections WHERE space = %s AND root = %s AND file = %s AND section = %s",
                (origin.space, root, file, section),
            )
    return imported


# Migrated rows of this repository (or a folder inside it) re-keyed to the repository.
_ADOPT = """
UPDATE markdown_sections m SET root = %(root)s, root_guessed = false
WHERE m.space = %(space)s AND m.family IS NOT NULL AND m.root_guessed
  AND (m.root = %(root)s OR starts_with(m.root, rtrim(%(root)s, '/') || '/'))
  AND NOT EXISTS (
      SELECT 1 FROM markdown_sections o
      WHERE o.space = m.space AND o.root = %(root)s AND o.file = m.file AND o.section = m.section
        AND o.root_guessed = false)
"""


def describe(imported: Imported, space: str) -> str:
    removed = f", {len(imported.removed)} forgotten (their sections are gone)" if imported.removed else ""
    what = imported.outcome.describe()
    files = f"{imported.files} instruction files" + (f" of {imported.root}" if imported.root else "")
    return f"Imported {files} into space {space}: {what}{removed}."
