"""Rewrite the README's command table from lore's argument parser (lore.cli.reference).

    python scripts/readme_commands.py          rewrite the table between its two markers
    python scripts/readme_commands.py --check  exit 1 when the README's table is not the parser's

tests/unit/test_cli_reference.py runs the check, so the table cannot drift from what `lore` parses.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lore.cli.main import parser
from lore.cli.reference import markdown_table

README = Path(__file__).resolve().parent.parent / "README.md"
BEGIN = "<!-- commands: made from lore's parser by scripts/readme_commands.py; do not edit by hand -->\n"
END = "<!-- end of commands -->\n"


def rewritten(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + markdown_table(parser()) + text[end:]


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    fresh = rewritten(text)
    if "--check" in argv:
        if fresh != text:
            print("README.md's command table differs from the parser: run scripts/readme_commands.py")
            return 1
        return 0
    README.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
