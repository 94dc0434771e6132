"""Agent hooks: per-client input/output adapters and the session-start path.

Everything under here is on the hook's hot path: no psycopg, no MCP SDK, no web stack, no
embedding runtime (guarded by tests/unit/test_hook_imports.py).
"""
