"""Fixtures of tests/http (the helpers live in support/lorehttp.py)."""

from support.lorehttp import project, signed_in

__all__ = ["project", "signed_in"]
