"""The MCP server (stdio and streamable HTTP) and its tools."""
