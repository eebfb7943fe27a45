"""The command line: `python -m inspector compile|targets|...`, human output or --json.

Exit status: 0 on success, 1 when the kernel did not compile (or would not launch), 2 on usage
errors. Diagnostics go to stderr so that stage text on stdout can be piped.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import threading
from typing import Any, Sequence

from . import compile as compile_command

# Each module here has `register(subparsers)`, which adds its subparser and sets `func` to a
# handler taking the parsed namespace and returning the exit status.
COMMANDS = ["occupancy", "bench", "explain", "fix", "fits", "diff", "profile", "versions", "guard", "capture", "pool",
            "app", "mcp"]


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        # `triton-inspector` (the installed command) or `python -m inspector`
        prog="triton-inspector" if os.path.basename(sys.argv[0]) == "triton-inspector" else "python -m inspector",
        description="Triton Kernel Inspector: compile Triton kernels GPU-free or natively and see what the "
                    "compiler made of them.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    compile_command.register(sub)  # compile, targets

    # A command needs only its own module (the others' analysis, bench and guard imports outweigh a
    # cache hit's own work); no command named (help, a typo): all of them.
    first = next((a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")), None)
    wanted = [] if first in ("compile", "targets") else [first] if first in COMMANDS else COMMANDS
    for name in wanted:
        try:
            module = importlib.import_module(f".{name}", __package__)
        except ImportError as e:
            # never dropped silently: the command is listed, and says why it cannot run
            _unavailable(sub, name, e)
            continue
        module.register(sub)
    return parser


def _unavailable(sub: Any, name: str, error: ImportError) -> None:
    why = f"{type(error).__name__}: {error}"

    def run(ns: argparse.Namespace) -> int:
        print(f"error: the {name} command cannot load ({why}); scripts/install.sh installs what it needs",
              file=sys.stderr)
        return 2

    p = sub.add_parser(name, help=f"(cannot load here: {why})", add_help=False)
    p.add_argument("rest", nargs=argparse.REMAINDER)
    p.set_defaults(func=run)


def run() -> None:
    """The process's way in (`python -m inspector`, the `triton-inspector` command): `main`, then
    an exit that skips the interpreter's teardown of every module, about a tenth of a cache hit's
    time (docs/performance.md#a-cache-hit). What must outlive the process is done first: the
    cache's pending writes, the atexit handlers, the output streams. A thread of its own still
    running (not a daemon) gets the ordinary exit, which waits for it."""
    status = main()
    cache = sys.modules.get("inspector.compile.cache")
    if cache is not None:
        cache.flush()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        raise SystemExit(status)
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["app"] and not {"-h", "--help"} & set(args[1:]):
        from .app import serve  # Streamlit's own options follow, which argparse would refuse

        return serve(args[1:])
    parser = build_parser(argv)
    ns = parser.parse_args(argv)
    # One request per run: warming the worker pool up would cost more than it saves.
    os.environ.setdefault("TRITON_INSPECTOR_PREWARM", "0")
    try:
        return int(ns.func(ns) or 0)
    except KeyboardInterrupt:
        return 130
