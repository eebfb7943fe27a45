"""Recorded results: sweeps measured on a real GPU and shipped in assets/bench/<kernel>.json.

They let the app and the CLI show real curves on a machine without a GPU. A recorded result is
labelled as such (`BenchResult.recorded`, `provenance()`: the device and the date it ran on).
"""

from __future__ import annotations

from pathlib import Path

from ..places import assets_dir
from .protocol import display_source
from .records import BenchResult, load_result

RECORDED_DIR = assets_dir() / "bench"


def recorded_path(kernel: str) -> Path:
    """Where the recorded result of a bundled kernel lives (it may not exist)."""
    return RECORDED_DIR / f"{kernel}.json"


def recorded_kernels() -> list[str]:
    """Bundled kernels with a recorded result, sorted."""
    if not RECORDED_DIR.is_dir():
        return []
    return sorted(p.stem for p in RECORDED_DIR.glob("*.json") if not p.stem.startswith("_"))


def recorded_result(kernel: str) -> BenchResult | None:
    """The recorded result of a bundled kernel, marked recorded, or None."""
    path = recorded_path(kernel)
    if not path.is_file():
        return None
    result = load_result(path)
    result.recorded = True
    try:
        result.recorded_path = display_source(path)
    except ValueError:
        result.recorded_path = str(path)
    return result
