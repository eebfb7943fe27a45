"""Occupancy: how many blocks (workgroups) of a kernel fit on one SM (CU), and why not more.

- `nvidia_occupancy`: NVIDIA's arithmetic exactly as `cuda_occupancy.h` computes it.
- `amd_occupancy`: AMD CDNA (gfx90a/gfx942/gfx950), as the HIP runtime computes it.
- `triton_occupancy`: either, in Triton's terms (num_warps, registers, `metadata.shared`);
  `occupancy`: the same for any block size (the calculator's threads).
- `what_if`, `occupancy_curves`: the same question with inputs changed; the calculator curves.
- `waves`: wave quantisation of a grid on a GPU.

Results are dataclasses; `dataclasses.asdict(result)` is JSON-serialisable.
"""

from inspector.occupancy.amd import AmdOccupancy, amd_occupancy
from inspector.hardware.targets import Arch, parse_arch
from inspector.occupancy.curves import Curve, Curves, occupancy_curves
from inspector.occupancy.nvidia import NvidiaOccupancy, nvidia_occupancy
from inspector.occupancy.triton_terms import (KernelResources, Occupancy, WhatIf, occupancy, triton_occupancy,
                                              warp_size, what_if)
from inspector.occupancy.waves import Waves, waves

__all__ = [
    "AmdOccupancy", "Arch", "Curve", "Curves", "KernelResources", "NvidiaOccupancy", "Occupancy", "Waves",
    "WhatIf", "amd_occupancy", "nvidia_occupancy", "occupancy_curves", "parse_arch", "triton_occupancy",
    "occupancy", "warp_size", "waves", "what_if",
]
