"""Where things are, for tests in any folder (imported by name: tests/support is on pytest's pythonpath, pyproject.toml)."""

from __future__ import annotations

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
