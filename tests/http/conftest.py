"""Fixtures of tests/http (the helpers live in support/lorehttp.py)."""

from support.lorehttp import project, signed_in, signed_in_process

__all__ = ["project", "signed_in", "signed_in_process"]
