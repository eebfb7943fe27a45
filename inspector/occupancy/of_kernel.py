"""Occupancy of an inspected kernel on its target, and the waves its grid needs there.

Computed in the caller from the record's resources (cheap, never cached), so a change to the
occupancy rules needs no recompile.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from ..hardware.catalogue import gpu_for_target, gpu_from_properties
from . import triton_occupancy, waves
from ..record import Inspection


def occupancy_of(rec: Inspection, native_properties: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The occupancy record (blocks/SM, occupancy, limiters, notes, and `waves` for the grid on the
    target's representative GPU, or on the native GPU when the kernel was compiled natively).
    None when the record has no resources to work from."""
    r = rec.resources
    if not rec.stages or not r.num_warps:
        return None
    if rec.backend == "cuda":
        if r.registers is None:
            return None
        occ = triton_occupancy(rec.target, r.num_warps, r.registers, r.shared_bytes, num_ctas=r.num_ctas)
    elif rec.backend == "hip":
        if r.vgprs is None:
            return None
        occ = triton_occupancy(rec.target, r.num_warps, r.vgprs, r.shared_bytes, agprs=r.agprs or 0,
                               sgprs=r.sgprs or 0, waves_per_eu=int(rec.options.get("waves_per_eu") or 0))
    else:
        return None
    out = asdict(occ)
    native = gpu_from_properties(native_properties) if native_properties else None
    gpu = gpu_for_target(rec.target, native)
    out["gpu"] = gpu.name if gpu else None
    out["waves"] = None
    if gpu and rec.grid:
        out["waves"] = asdict(waves(math.prod(rec.grid), occ.blocks_per_sm, gpu.sm_count))
    return out
