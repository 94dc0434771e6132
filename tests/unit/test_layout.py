"""The import contracts (pyproject.toml, [tool.importlinter]; `make lint` checks them) are by package:
every top-level module or package of lore is in one layer of the `layers` contract, so a new one
cannot slip past the rules by being in none, and every layer names something that exists."""

from __future__ import annotations

import tomllib
from pathlib import Path

import lore

ROOT = Path(__file__).resolve().parents[2]
# Not layers: the version (lore/__init__.py) and the model files' folder (no code).
NOT_CODE = {"lore.models"}


def _layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["id"] == "layers")
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def test_every_package_is_in_exactly_one_layer() -> None:
    package = Path(lore.__path__[0])
    found = {
        f"lore.{p.stem}" if p.is_file() else f"lore.{p.name}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    } - NOT_CODE
    layers = _layers()
    listed = [name for layer in layers for name in layer]
    assert len(listed) == len(set(listed)), "a package is in two layers"
    assert found - set(listed) == set(), (
        "put the new package into a layer of pyproject.toml's `layers` contract"
    )
    assert set(listed) - found == set(), "the `layers` contract names a package that is gone"


def test_the_layers_are_ordered_as_the_design_says() -> None:
    assert _layers() == [
        {"lore.cli"},
        {"lore.mcp", "lore.http", "lore.hooks", "lore.installers"},
        {"lore.service"},
        {"lore.store"},
        {"lore.db", "lore.embeddings"},
        {"lore.core"},
    ]
