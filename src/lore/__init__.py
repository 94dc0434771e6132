"""lore: one memory shared by every AI coding agent.

Nothing heavy is imported here: the session-start hook imports this package. The version lives in
one place, pyproject.toml; `lore.__version__` reads the installed metadata on first use only.
"""

from __future__ import annotations


def __getattr__(name: str) -> str:
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("shared-lore")
        except PackageNotFoundError:  # run from a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module 'lore' has no attribute {name!r}")
