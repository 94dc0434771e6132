"""Raw MCP messages, for the tests and benchmarks that speak JSON-RPC without the SDK's client
(pipes byte for byte, plain HTTP posts, malformed input)."""

from __future__ import annotations

from typing import Any

PROTOCOL = "2025-06-18"
# What a streamable HTTP client must send with every POST to /mcp.
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def initialize_params(client: str) -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": client, "version": "1"}}


def initialize(client: str, ident: int = 1) -> dict[str, Any]:
    """The initialize request of a client named `client`."""
    return {"jsonrpc": "2.0", "id": ident, "method": "initialize", "params": initialize_params(client)}
