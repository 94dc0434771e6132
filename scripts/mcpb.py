"""Build lore's MCP bundle for Claude Desktop: `mcpb/` (manifest.json, README.md) zipped as
DEST/lore-<version>.mcpb, the form `mcpb pack` makes (a zip with manifest.json at its root).

    python scripts/mcpb.py [DEST]     (`make mcpb`: DEST is dist/)

Standard library only, so `make mcpb` needs neither the venv nor npm; the test suite checks the
result with the official `@anthropic-ai/mcpb` CLI (tests/tools/test_mcpb.py). The bundle carries no
code: its manifest runs the `lore` installed on the machine (`lore mcp`). Entries get a fixed date
and mode, so the same sources give the same bytes (and sha256) wherever they are built.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "mcpb"
FILES = ("manifest.json", "README.md")
DATE = (2020, 1, 1, 0, 0, 0)


def build(dest: Path) -> Path:
    manifest = json.loads((SOURCE / "manifest.json").read_text(encoding="utf-8"))
    dest.mkdir(parents=True, exist_ok=True)
    out = dest / f"{manifest['name']}-{manifest['version']}.mcpb"
    part = out.with_name(out.name + ".part")
    with zipfile.ZipFile(part, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for name in FILES:
            entry = zipfile.ZipInfo(name, date_time=DATE)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(entry, (SOURCE / name).read_bytes())
    part.replace(out)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1 or (args and args[0].startswith("-")):
        sys.exit("usage: mcpb.py [DEST]")
    out = build(Path(args[0]) if args else ROOT / "dist")
    print(f"{out} sha256 {hashlib.sha256(out.read_bytes()).hexdigest()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
