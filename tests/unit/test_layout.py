"""The import contracts (pyproject.toml, [tool.importlinter]; `make lint` checks them) cover every
module: each top-level module or package of lore is either core or an adapter, so a new module
cannot slip past the rules by being in neither list."""

from __future__ import annotations

import tomllib
from pathlib import Path

import lore

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = {"lore.cli", "lore.mcp", "lore.http", "lore.http.web", "lore.hooks", "lore.installers"}


def _core() -> tuple[set[str], set[str]]:
    """(source_modules, forbidden_modules) of the `core` contract."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    core = next(c for c in config["contracts"] if c["id"] == "core")
    return set(core["source_modules"]), set(core["forbidden_modules"])


def test_every_module_is_core_or_an_adapter() -> None:
    package = Path(lore.__path__[0])
    found = {
        f"lore.{p.stem}" if p.is_file() else f"lore.{p.name}"
        for p in package.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())
    }
    core, forbidden = _core()
    assert found - core - ADAPTERS == set(), "classify the new module in pyproject.toml's core contract"
    assert core - found == set(), "the core contract names a module that is gone"
    assert forbidden == ADAPTERS
