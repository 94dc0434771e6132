"""`lore import-markdown DIR`: a markdown memory bank (projectbrief.md, productContext.md,
systemPatterns.md, techContext.md, activeContext.md, progress.md, decisions.md, ...) and CLAUDE.md /
AGENTS.md files become notes, one per section.

- Sections: a file splits at its top heading level; a lone `#` title on top makes the `##` headings
  the sections (text between the title and the first `##` is a section of its own). Headings inside
  code fences do not count. A file without headings is one section. A section over 32 KiB is cut
  into parts at line boundaries.
- Kind: from the file name (progress.md -> progress, systemPatterns.md -> pattern, ...); for a file
  whose name says nothing (CLAUDE.md, AGENTS.md, README.md), from each section's heading
  ("## Commands" -> devenv, "## Architecture" -> pattern), else `note`.
- Idempotent: each (space, file, section) is recorded with the note it became and a hash of what was
  imported. Importing again leaves unchanged sections alone, revises the note of a changed one (a new
  version of the same n_ id), and never brings back a note that was forgotten since.
- Secrets: every section is scanned before anything is written; one finding refuses the whole import
  unless `--allow-secret` is given.
- Links: never followed out of the folder. A file that is a symbolic link, or whose real path is
  outside the folder, is skipped and listed with the reason (`files_in`); files are read with
  O_NOFOLLOW and only when regular (`read`).

Parsing is pure; `apply` writes, in the caller's transaction.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from lore.core import secrets
from lore.core.admission import NoteCandidate
from lore.core.errors import InvalidInput, Refused
from lore.core.session import Origin
from lore.core.validate import MAX_BODY_BYTES, MAX_TITLE
from lore.store import notes

# Most specific first; a name matches a kind when one of its words (or the whole name) is a keyword.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("brief", ("projectbrief", "brief", "overview", "summary", "about", "readme", "introduction")),
    ("product", ("productcontext", "product", "requirements", "prd", "features", "userstories")),
    ("active", ("activecontext", "active", "current", "focus", "wip", "now")),
    ("progress", ("progress", "status", "changelog", "done", "milestones")),
    ("decision", ("decisions", "decision", "adr", "adrs", "decisionlog", "tradeoffs", "rationale")),
    ("plan", ("plan", "plans", "roadmap", "next", "nextsteps")),
    ("task", ("tasks", "task", "todo", "todos", "backlog")),
    (
        "devenv",
        (
            "devenv",
            "setup",
            "development",
            "environment",
            "commands",
            "build",
            "building",
            "install",
            "installation",
            "contributing",
            "tooling",
            "workflow",
            "testing",
            "tests",
            "running",
            "scripts",
            "debugging",
            "deploy",
            "deployment",
        ),
    ),
    ("tech", ("techcontext", "tech", "stack", "techstack", "technology", "technologies", "dependencies")),
    (
        "pattern",
        (
            "systempatterns",
            "patterns",
            "pattern",
            "architecture",
            "design",
            "conventions",
            "style",
            "codestyle",
            "structure",
            "guidelines",
        ),
    ),
)
# Files named after an agent (or generic) say nothing about their content: headings decide.
GENERIC = {
    "claude",
    "agents",
    "agent",
    "gemini",
    "copilotinstructions",
    "cursorrules",
    "memory",
    "notes",
    "instructions",
    "rules",
    "index",
    "context",
}
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True)
class Section:
    file: str  # the key of its file (relative to the workspace when inside it)
    key: str  # the heading path, unique within the file
    title: str
    body: str
    kind: str
    line: int  # the line of its body's first line in the file (1-based)
    last_line: int = 0  # the line of its body's last line (0: not known)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(f"{self.kind}\0{self.title}\0{self.body}".encode()).hexdigest()


def infer_kind(name: str) -> str | None:
    """The note kind a file name or heading suggests, or None when it says nothing."""
    words = [w.lower() for w in _WORDS.findall(name)]
    joined = "".join(words)
    if not joined or joined in GENERIC:
        return None
    for kind, keywords in KINDS:
        for keyword in keywords:
            if keyword in words or keyword == joined or (len(keyword) >= 6 and keyword in joined):
                return kind
    return None


def sections(text: str, file: str) -> list[Section]:
    """The sections of one markdown file, in order (pure)."""
    stem = Path(file).stem
    file_kind = infer_kind(stem)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    headings: list[tuple[int, int, str]] = []  # (line index, level, text)
    fenced = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match and match.group(2):
            headings.append((i, len(match.group(1)), match.group(2)))
    # A lone top heading that comes first is the document's title: the next level makes the sections
    # (none: the text under the title is one section named after it).
    doc_title, title_line = None, -1
    split = min((level for _, level, _ in headings), default=0)
    if split and [lvl for _, lvl, _ in headings].count(split) == 1 and headings[0][1] == split:
        title_line, _, doc_title = headings[0]
        split = min((level for _, level, _ in headings if level > split), default=0)
    cuts = [(i, t) for i, level, t in headings if level == split]
    parts: list[tuple[int, str | None, int]] = []  # (start line index, heading, body start index)
    start = title_line + 1
    if not cuts or cuts[0][0] > start:
        parts.append((start, None, start))
    parts.extend((i, heading, i + 1) for i, heading in cuts)
    out: list[Section] = []
    seen: dict[str, int] = {}
    label = doc_title or Path(file).name
    for n, (_, heading, body_start) in enumerate(parts):
        end = parts[n + 1][0] if n + 1 < len(parts) else len(lines)
        body = "\n".join(lines[body_start:end]).strip()
        if not body:
            continue
        first_line = next(i for i in range(body_start, end) if lines[i].strip()) + 1  # 1-based
        name = heading or (doc_title or "(top)")
        seen[name] = seen.get(name, 0) + 1
        key = name if seen[name] == 1 else f"{name} #{seen[name]}"
        title = f"{label}: {heading}" if heading else label
        kind = file_kind or (infer_kind(heading) if heading else None) or "note"
        for part, (chunk, offset) in enumerate(_chunks(body)):
            out.append(
                Section(
                    file=file,
                    key=key if part == 0 else f"{key} (part {part + 1})",
                    title=_clip(title if part == 0 else f"{title} (part {part + 1})", MAX_TITLE),
                    body=chunk,
                    kind=kind,
                    line=first_line + offset,
                    last_line=first_line + offset + chunk.count("\n"),
                )
            )
    return out


def _chunks(body: str) -> list[tuple[str, int]]:
    """The body in pieces of at most 32 KiB, cut at line boundaries: (text, line offset)."""
    if len(body.encode()) <= MAX_BODY_BYTES:
        return [(body, 0)]
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    size, offset = 0, 0
    for i, line in enumerate(body.split("\n")):
        cost = len(line.encode()) + 1
        while cost > MAX_BODY_BYTES:  # one enormous line: cut it by characters
            line, rest = line[: MAX_BODY_BYTES // 4], line[MAX_BODY_BYTES // 4 :]
            if current:
                chunks.append(("\n".join(current), offset))
            chunks.append((line, i))
            current, size, offset = [], 0, i
            line, cost = rest, len(rest.encode()) + 1
        if size + cost > MAX_BODY_BYTES and current:
            chunks.append(("\n".join(current), offset))
            current, size, offset = [], 0, i
        current.append(line)
        size += cost
    if current and "\n".join(current).strip():
        chunks.append(("\n".join(current), offset))
    return [(c.strip(), o) for c, o in chunks if c.strip()]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Files:
    """What `files_in` found: the files to import, and those it left out with the reason."""

    files: list[Path]
    skipped: list[tuple[Path, str]]


def files_in(path: Path) -> Files:
    """The markdown files to import: the file itself, or the `.md` files of a directory and of its
    `memory-bank/` and `.claude/` folders (not deeper: a repository's docs are not a memory bank).

    Links are never followed out of the folder (a checkout may plant `projectbrief.md -> /etc/passwd`):
    a file that is a symbolic link, a file whose real path is outside the folder (through a linked
    `memory-bank/` or `.claude/`) and anything that is not a regular file (a FIFO would block the
    read) are skipped, each with its reason. A file named directly must not be a link either."""
    if path.is_symlink():
        raise InvalidInput(
            f"{path} is a symbolic link (to {os.readlink(path)}): import-markdown does not follow links.",
            "Pass the file or folder itself.",
        )
    if path.is_file():
        return Files([path], [])
    if not path.is_dir():
        raise InvalidInput(
            f"{path} is neither a directory nor a file.", "Pass a memory bank folder or a .md file."
        )
    root = path.resolve()
    found: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for folder in (path, path / "memory-bank", path / ".claude"):
        if not folder.is_dir():
            continue
        for file in sorted(p for p in folder.iterdir() if p.suffix.lower() == ".md"):
            why = unsafe(file, root)
            if why is None:
                found.append(file)
            else:
                skipped.append((file, why))
    if not found:
        more = f" to import (skipped {len(skipped)}: {skipped[0][1]} ...)" if skipped else ""
        raise InvalidInput(
            f"No .md files in {path}{more}.", "Pass the folder that holds the memory bank files."
        )
    return Files(found, skipped)


def unsafe(file: Path, root: Path) -> str | None:
    """Why `file` is not imported, or None."""
    if file.is_symlink():
        return f"a symbolic link (to {os.readlink(file)})"
    if not stat.S_ISREG(file.lstat().st_mode):
        return "not a regular file"
    real = file.resolve()
    if not real.is_relative_to(root):
        return f"its real path {real} is outside {root} (a folder on the way is a symbolic link)"
    return None


# The most one import reads: a file (a memory bank's file or an agent's instruction file is a few
# KiB; a 20 MB CLAUDE.md became 20,000 notes) and the sections of one import in all.
MAX_FILE_BYTES = 1024 * 1024
MAX_SECTIONS = 2_000


def read(file: Path) -> str:
    """The text of one file, opened without following a link (a file swapped for one since
    `files_in` looked is refused, not read), only when it is a regular file of at most
    MAX_FILE_BYTES."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise InvalidInput(f"Cannot read {file}: {why}.", "Make it a readable UTF-8 file.") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise InvalidInput(f"Cannot read {file}: not a regular file.", "Make it a readable UTF-8 file.")
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise InvalidInput(
            f"{file} is over {MAX_FILE_BYTES // 1024:,} KiB: nothing was imported.",
            "Split it, or import the part agents need (instruction files and memory banks are a few KiB).",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"Cannot read {file}: {exc}.", "Make it a readable UTF-8 file.") from None


def file_key(path: Path, workspace: Path) -> str:
    """How a file is known across imports: relative to the workspace when inside it."""
    resolved = path.resolve()
    try:
        return str(resolved.relative_to(workspace.resolve()))
    except ValueError:
        return str(resolved)


def refuse_secrets(found: Sequence[Section], allow: bool) -> None:
    """Refuse the whole import when any section holds a likely credential (nothing is written)."""
    if allow:
        return
    hits = [(s, f) for s in found for f in secrets.scan(s.body + "\n" + s.title)]
    if not hits:
        return
    where = "; ".join(f"{s.file}:{s.line + f.line - 1} {f.kind} {f.preview!r}" for s, f in hits[:5])
    more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
    raise Refused(
        f"Refused: {len(hits)} likely credential(s) in the markdown: {where}{more}. Nothing was imported.",
        "Take the secrets out of those files (say where they live instead) and import again, or, if they "
        f"are not secrets, `{secrets.DELIBERATE['markdown']}`.",
    )


@dataclass
class Outcome:
    created: list[str] = field(default_factory=list)  # note ids
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    forgotten: int = 0  # sections whose note was forgotten since: left alone

    def describe(self) -> str:
        return f"{len(self.created)} new notes, {len(self.updated)} updated, {self.unchanged} unchanged" + (
            f", {self.forgotten} skipped (their notes were forgotten)" if self.forgotten else ""
        )


def apply(
    conn: psycopg.Connection,
    origin: Origin,
    root: str,
    found: Sequence[Section],
    *,
    allow_secret: bool = False,
    families: Mapping[str, str] | None = None,
    tag: str = "imported",
) -> Outcome:
    """Write the sections as notes of `origin.space`, in one transaction; see the module docstring.
    `root`: the folder the sections' file keys are relative to (their key is (space, root, file,
    section): the same file name in another repository is another section). `families`: file key
    -> instruction file family (lore.store.instructions), recorded with each section and its lines;
    `tag` goes on every note."""
    if len(found) > MAX_SECTIONS:
        raise InvalidInput(
            f"{len(found):,} sections in one import; the limit is {MAX_SECTIONS:,}: nothing was imported.",
            "Import fewer files at once (a folder, not the whole tree), or split the largest ones.",
        )
    refuse_secrets(found, allow_secret)
    outcome = Outcome()
    families = families or {}
    with conn.transaction():
        for section in found:
            tags = [tag, _tag(Path(section.file).name)]
            where = (section.line, section.last_line or None, families.get(section.file))
            known = conn.execute(
                "SELECT m.lineage, m.sha256, n.version_id IS NOT NULL FROM markdown_sections m "
                "LEFT JOIN notes n ON n.lineage = m.lineage AND n.superseded_at IS NULL "
                "WHERE m.space = %s AND m.root = %s AND m.file = %s AND m.section = %s FOR UPDATE OF m",
                (origin.space, root, section.file, section.key),
            ).fetchone()
            if known is None:
                note = notes.remember(
                    conn,
                    origin,
                    section.body,
                    kind=section.kind,
                    title=section.title,
                    tags=tags,
                )
                conn.execute(
                    "INSERT INTO markdown_sections (space, root, file, section, lineage, sha256, first_line, "
                    "last_line, family) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (origin.space, root, section.file, section.key, note.lineage, section.sha256, *where),
                )
                outcome.created.append(note.id)
                continue
            lineage, sha, current = known
            if not current:
                outcome.forgotten += 1
            elif sha == section.sha256:
                outcome.unchanged += 1
                conn.execute(
                    _TOUCH,
                    (section.sha256, section.sha256, *where, origin.space, root, section.file, section.key),
                )
            else:
                old = notes.lock(conn, origin, [origin.space], int(lineage))
                edit = NoteCandidate(section.body, section.kind, section.title, tuple(tags))
                new = notes.write_next(conn, origin, old, edit)
                conn.execute(
                    _TOUCH,
                    (section.sha256, section.sha256, *where, origin.space, root, section.file, section.key),
                )
                outcome.updated.append(new.id)
    return outcome


# A section imported again: its hash (and the time, when the hash changed), lines and family.
_TOUCH = (
    "UPDATE markdown_sections SET imported_at = CASE WHEN sha256 = %s THEN imported_at ELSE now() END, "
    "sha256 = %s, first_line = %s, last_line = %s, family = %s "
    "WHERE space = %s AND root = %s AND file = %s AND section = %s"
)


def _tag(name: str) -> str:
    return re.sub(r"[^a-z0-9_.-]+", "-", name.lower())[:64] or "markdown"
