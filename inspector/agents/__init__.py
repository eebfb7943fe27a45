"""Doors for coding agents: `mcp_server` (the MCP tools over the command line's JSON)."""
