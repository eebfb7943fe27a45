"""CLI subcommands that live in their own modules.

Each module named in COMMANDS has `register(subparsers)`, which adds its argparse subparser and
sets `func` to a handler taking the parsed namespace and returning the exit status.
"""

COMMANDS = ["occupancy", "bench", "explain", "diff", "versions", "guard", "capture", "pool"]
