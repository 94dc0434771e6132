#!/usr/bin/env python3
"""src/lore/core/lookalikes.py: the characters a reader can take for those of lore's envelope tags,
derived from Unicode's confusables data (UTS #39) and Python's unicodedata, so that the hook never
loads either: lore.core.inert reads a tag through this table (docs/design.md, Content and budget).

What a character "reads as" (its fold) is the UTS #39 skeleton taken case-insensitively: NFKC, then
the skeleton (NFD, every character replaced by its prototype in confusables.txt, NFD again), then
case folding and the skeleton once more; characters that are read past (spaces, invisible and
combining characters, dashes, underscores, slashes and backslashes) fold to nothing. The table holds:
  FOLDS     every character whose fold is spelled only with letters of the tag names' folds (`m`
            folds to `rn`, as UTS #39 says: `rn` passes for `m`), by fold
  OPENERS   every character that can open a tag: those folding to `<` or `[`, every opening bracket
            (category Ps) that is not a parenthesis or a curly bracket by its fold, and the angle
            quotation marks (‹ «)
  SKIPPED   the characters folding to nothing that their category alone does not say (`/`, `\\`,
            spacing accents, look-alikes of `-`, `/`, `\\`, `_`)
  ENTITIES  the HTML named character references (Python's html.entities.html5) of any of them

confusables.txt is not in this repository (no network at build time): pass the copy to read. The one
used: version 17.0.0, 2025-07-22, sha256 in the module's header.

    .venv/bin/python scripts/lookalikes.py /path/to/confusables.txt          # write the module
    .venv/bin/python scripts/lookalikes.py /path/to/confusables.txt --check  # exit 1 when it differs
"""

from __future__ import annotations

import argparse
import hashlib
import html.entities
import re
import sys
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "src" / "lore" / "core" / "lookalikes.py"
TAG_NAMES = ("lore-memory", "lore-inbox")
# Read past inside a tag, besides what a category says (lore.core.inert.SKIPPED_CATEGORIES).
READ_PAST = "/\\-_"
SKIPPED_CATEGORIES = ("Cf", "Mn", "Me", "Cc", "Pd", "Pc", "Zs", "Zl", "Zp")
# A parenthesis or a curly bracket by its fold: prose, not a tag.
NOT_OPENERS = ("(", "((", "{", ")", "}")


def prototypes(path: Path) -> tuple[dict[str, str], str]:
    """confusables.txt's mapping (source character -> its prototype) and the file's version line."""
    mapping: dict[str, str] = {}
    version = ""
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        if line.startswith("# Version:"):
            version = line.removeprefix("# Version:").strip()
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        source, target, _kind = (part.strip() for part in data.split(";"))
        mapping[chr(int(source, 16))] = "".join(chr(int(x, 16)) for x in target.split())
    return mapping, version


def folder(mapping: dict[str, str]) -> Callable[[str], str]:
    def skeleton(text: str) -> str:
        text = unicodedata.normalize("NFD", text)
        return unicodedata.normalize("NFD", "".join(mapping.get(ch, ch) for ch in text))

    def fold(ch: str) -> str:
        once = skeleton(skeleton(unicodedata.normalize("NFKC", ch)).casefold())
        return "".join(
            c
            for c in once
            if not (c.isspace() or unicodedata.category(c) in SKIPPED_CATEGORIES or c in READ_PAST)
        )

    return fold


@dataclass(frozen=True)
class Table:
    names: tuple[str, ...]
    folds: dict[str, str]
    openers: str
    skipped: str
    entities: dict[str, str]


def derive(mapping: dict[str, str]) -> Table:
    fold = folder(mapping)
    names = tuple(fold(ch) for ch in "".join(TAG_NAMES))
    name_folds = tuple("".join(fold(ch) for ch in name) for name in TAG_NAMES)
    alphabet = set("".join(names))
    folds: dict[str, list[str]] = defaultdict(list)
    openers: list[str] = []
    skipped: list[str] = []
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        ch = chr(code)
        got = fold(ch)
        category = unicodedata.category(ch)
        name = unicodedata.name(ch, "")
        bracket = category == "Ps" and got not in NOT_OPENERS and "QUOTATION" not in name
        if got in ("<", "[") or bracket or (category == "Pi" and "ANGLE" in name):  # ‹ «
            openers.append(ch)
        elif got and set(got) <= alphabet:
            folds[got].append(ch)
        elif not got and not (ch.isspace() or category in SKIPPED_CATEGORIES):
            skipped.append(ch)
    known = set(openers) | set(skipped) | {c for chars in folds.values() for c in chars}
    entities = {
        name.removesuffix(";"): value
        for name, value in html.entities.html5.items()
        if name.endswith(";") and len(value) == 1 and value in known
    }
    return Table(
        name_folds,
        {fold: "".join(chars) for fold, chars in sorted(folds.items())},
        "".join(openers),
        "".join(skipped),
        dict(sorted(entities.items())),
    )


def _escaped(text: str) -> str:
    """A Python string literal of `text` with every non-ASCII or unprintable character escaped (the
    look-alikes stay readable as code points, and no editor shows a confusable)."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif 32 <= code < 127:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return '"' + "".join(out) + '"'


def _wrapped(text: str, indent: str, width: int = 96) -> list[str]:
    """`text` as adjacent string literals of at most `width` characters of source each."""
    pieces, current = [], ""
    for ch in text:
        piece = _escaped(ch)[1:-1]
        if len(current) + len(piece) > width:
            pieces.append(current)
            current = ""
        current += piece
    if current or not pieces:
        pieces.append(current)
    return [f'{indent}"{p}"' for p in pieces]


def render(table: Table, version: str, digest: str) -> str:
    folds, entities = table.folds, table.entities
    count = sum(len(v) for v in folds.values())
    lines = [
        '"""What a reader can take for the characters of lore\'s envelope tags (lore-memory, lore-inbox):',
        "generated by scripts/lookalikes.py from Unicode's confusables.txt (UTS #39, version "
        f"{version}, sha256",
        f"{digest[:16]}...) and Python's unicodedata {unicodedata.unidata_version}; do not edit. Read by "
        "lore.core.inert, which",
        "folds each character of stored text through it (a UTS #39 skeleton taken case-insensitively).",
        f"{count} letters, {len(table.openers)} openers, "
        f"{len(table.skipped)} characters read past, {len(entities)} HTML entities.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# The folds of the tag names (`m` reads as `rn`).",
        f"NAMES = ({', '.join(_escaped(n) for n in table.names)})",
        "",
        "# Every character that can open a tag (`<`, `[` and what passes for them, opening brackets).",
        "OPENERS = (",
        *_wrapped(table.openers, "    "),
        ")",
        "",
        "# Characters read past inside a tag beyond what their category says (slashes, spacing accents).",
        "SKIPPED = (",
        *_wrapped(table.skipped, "    "),
        ")",
        "",
        "# fold -> every character with that fold.",
        "FOLDS = {",
    ]
    for fold, chars in folds.items():
        pieces = _wrapped(chars, "        ")
        if len(pieces) == 1 and len(pieces[0]) + len(fold) < 96:
            lines.append(f"    {_escaped(fold)}: {pieces[0].strip()},")
        else:
            lines += [f"    {_escaped(fold)}: (", *pieces, "    ),"]
    pairs = " ".join(f"{name}={value}" for name, value in entities.items())
    lines += [
        "}",
        "",
        "# HTML named character references of the characters above, `name=character` separated by spaces",
        "# (read only when stored text holds one: lore.core.inert.entity).",
        "ENTITIES = (",
        *_wrapped(pairs, "    "),
        ")",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("confusables", type=Path, help="Unicode's confusables.txt (UTS #39)")
    parser.add_argument("--check", action="store_true", help="exit 1 when the module differs")
    args = parser.parse_args(argv)
    mapping, version = prototypes(args.confusables)
    if not re.fullmatch(r"\d+\.\d+\.\d+", version):
        print(f"{args.confusables}: no '# Version:' line: is it confusables.txt?", file=sys.stderr)
        return 2
    digest = hashlib.sha256(args.confusables.read_bytes()).hexdigest()
    text = render(derive(mapping), version, digest)
    if args.check:
        same = MODULE.exists() and MODULE.read_text() == text
        print(f"{MODULE.relative_to(ROOT)}: {'up to date' if same else 'differs'}")
        return 0 if same else 1
    MODULE.write_text(text)
    print(f"wrote {MODULE.relative_to(ROOT)} from confusables.txt {version} (sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
