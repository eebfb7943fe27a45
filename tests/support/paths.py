"""Where things are, for tests in any folder (imported by name: tests/support is on pytest's pythonpath, pyproject.toml)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"


def has_gpu() -> bool:
    """Whether torch sees a CUDA (or ROCm) GPU here."""
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


def cli_environment(**extra: str) -> dict[str, str]:
    """The environment of a test's `python -m inspector` subprocess: the test session's, with the
    warm pool on, as a user's command line has it by default. The test process itself compiles
    in-process (tests/conftest.py); its command lines share one pool daemon per test session
    (keyed by the session's cache folder, stopped when the session ends), where each used to
    start a worker manager that imports torch and Triton: about 3 CPU-seconds a call, the test
    corpora's command lines 39% faster (docs/performance.md#what-the-test-suite-costs)."""
    return {**os.environ, "TRITON_INSPECTOR_POOL": "1", **extra}
