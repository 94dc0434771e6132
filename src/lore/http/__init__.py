"""`lore serve`: MCP over streamable HTTP at `/mcp`, a JSON API under `/api`, `/healthz`, `/readyz`;
with `--sign-in`, bearer tokens and one namespace of spaces per user."""
