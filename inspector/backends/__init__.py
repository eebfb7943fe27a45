"""Vendor-specific reading of compiled kernels, one module per vendor behind the same shape.

Each backend module offers:
- `STAGES`: the stage names it produces, in pipeline order;
- `extra_stages(asm) -> dict[str, str]`: stages we derive ourselves (NVIDIA: SASS);
- `resources(asm, metadata, log) -> Resources`: what the kernel uses, GPU-free;
- `start_resources(asm, metadata, log)`: the same, any tool it runs started now; calling what it
  returns waits for the Resources (the worker builds the rest of the record meanwhile).
Adding a target vendor is adding a module here and a line in `for_backend`.
"""

from __future__ import annotations

from types import ModuleType


def for_backend(backend: str) -> ModuleType:
    """The module that reads kernels compiled by Triton's `backend` ("cuda" or "hip")."""
    if backend == "cuda":
        from . import nvidia

        return nvidia
    if backend == "hip":
        from . import amd

        return amd
    raise ValueError(f"no reader for backend {backend!r}")
