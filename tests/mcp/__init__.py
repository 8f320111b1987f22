"""The MCP server, through real clients."""
