"""`python -m inspector mcp`: the MCP server for coding agents, on stdio (`inspector.agents.mcp_server`).

Tools compile, explain, fix, fits, profile and diff answer with exactly this command line's --json
output; the user's kernels compile in the sandbox, as from the page. An agent's MCP configuration:

    {"mcpServers": {"triton-inspector": {"command": "python", "args": ["-m", "inspector", "mcp"]}}}
"""

from __future__ import annotations

import argparse
from typing import Any

from inspector.cli.options import command_parser


def register(subparsers: Any) -> None:
    """Add the `mcp` subcommand."""
    p = command_parser(subparsers, "mcp", "serve the inspector to a coding agent over MCP (stdio)", __doc__)
    p.set_defaults(func=run)


def run(ns: argparse.Namespace) -> int:
    """Handler for `mcp`."""
    from inspector.agents.mcp_server import serve

    return serve()
