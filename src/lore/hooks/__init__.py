"""Agent hooks: per-client input/output adapters, the session-start path and the session-end
path (the handoff).

Everything under here is on the hook's hot path: no psycopg, no MCP SDK, no web stack, no
embedding runtime (guarded by tests/unit/test_hook_imports.py).
"""
