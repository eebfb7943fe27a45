"""Where the inspector keeps its files: its home (workspaces, captures, pools, side environments)
and its cache. Every module asks here, so the sandbox hides exactly the folders the rest uses.

Both follow an environment mapping (`os.environ` by default): the pool daemon resolves them from
its caller's environment, not its own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping


def inspector_home(env: Mapping[str, str] | None = None) -> Path:
    """$TRITON_INSPECTOR_HOME, or ~/.local/share/triton-inspector."""
    env = os.environ if env is None else env
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(env.get("TRITON_INSPECTOR_HOME") or os.path.join(home, ".local", "share", "triton-inspector"))


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """$TRITON_INSPECTOR_CACHE, else $XDG_CACHE_HOME/triton-inspector, else ~/.cache/triton-inspector."""
    env = os.environ if env is None else env
    if env.get("TRITON_INSPECTOR_CACHE"):
        return Path(env["TRITON_INSPECTOR_CACHE"])
    home = env.get("HOME") or os.path.expanduser("~")
    return Path(env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")) / "triton-inspector"


# The folder holding the `inspector` package: the checkout, or site-packages when installed.
PACKAGE_PARENT = Path(__file__).resolve().parent.parent


def gallery_dir() -> Path:
    """The bundled kernels: the checkout's kernels/ (where users open them by path), else the copy
    an installed package carries (inspector/gallery, mapped from kernels/ by setup.py)."""
    checkout = PACKAGE_PARENT / "kernels"
    return checkout if checkout.is_dir() else Path(__file__).resolve().parent / "gallery"


def assets_dir() -> Path:
    """The recorded benchmarks and profiles: the checkout's assets/, else the installed copy."""
    checkout = PACKAGE_PARENT / "assets"
    return checkout if checkout.is_dir() else Path(__file__).resolve().parent / "assets"
