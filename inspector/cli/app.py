"""`triton-inspector app [STREAMLIT OPTIONS]`: start the web app, as `streamlit run app.py` does in a
checkout, from wherever the package is installed.

    triton-inspector app                                   http://localhost:8501
    triton-inspector app --server.port 8600 --server.headless true

Options after `app` go to Streamlit unchanged (`streamlit run --help` lists them). The page runs
Streamlit in this process's place (exec), so Ctrl+C stops it as it stops `streamlit run`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .options import command_parser

APP_SCRIPT = Path(__file__).resolve().parent.parent / "ui" / "streamlit_app.py"


def register(subparsers: Any) -> None:
    """Add the `app` subcommand."""
    p = command_parser(subparsers, "app", "start the web app (Streamlit), as `streamlit run app.py`", __doc__)
    p.add_argument("streamlit_options", nargs=argparse.REMAINDER, help="options for `streamlit run`")
    p.set_defaults(func=run)


def command(options: list[str]) -> list[str]:
    """The command that serves the page."""
    return [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), *options]


def run(ns: argparse.Namespace) -> int:
    return serve(list(ns.streamlit_options))


def serve(options: list[str]) -> int:
    """Exec Streamlit on the packaged app with `options`; 2 when Streamlit is missing."""
    try:
        import streamlit  # noqa: F401 - only to say clearly that it is missing
    except ImportError:
        print("error: the app needs Streamlit: pip install 'streamlit>=1.67' (or sh scripts/install.sh)",
              file=sys.stderr)
        return 2
    argv = command(options)
    os.execv(argv[0], argv)
    return 0  # not reached
