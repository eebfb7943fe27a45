"""Occupancy in Triton's terms: num_warps, the compiled kernel's registers and `metadata.shared`.

How Triton launches (the rules modelled here, Triton 3.6-3.9):
- NVIDIA: a block is 32 x num_warps threads. All of Triton's shared memory is dynamic: the cubin
  declares none statically and every launch passes `metadata.shared` bytes. When a kernel needs
  more than 48 KB, Triton's loader (`loadBinary` in `backends/nvidia/driver.c`) sets
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES to the opt-in maximum minus the static size and
  the cache preference to PREFER_SHARED (the same carveout as the default); below 48 KB the
  kernel keeps the 48 KB default limit. A kernel needing more than the opt-in maximum never
  launches (Triton raises OutOfResources).
- AMD (CDNA, wave64): num_warps is waves per workgroup, so a workgroup is 64 x num_warps
  work-items; the LDS is dynamic too (`.group_segment_fixed_size` 0, `metadata.shared` passed at
  launch). `waves_per_eu` is a compiler request ("amdgpu-waves-per-eu") that caps the registers
  the compiler may use; the hardware schedules by the registers the kernel ended up with.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Union

from inspector.hardware.architectures import amd_limits, nvidia_limits
from inspector.occupancy.amd import AmdOccupancy, amd_occupancy
from inspector.hardware.targets import parse_arch
from inspector.occupancy.nvidia import NvidiaOccupancy, nvidia_occupancy

Occupancy = Union[NvidiaOccupancy, AmdOccupancy]

TRITON_DEFAULT_SMEM_LIMIT = 48 * 1024  # bytes of dynamic shared memory without Triton's opt-in


def occupancy(
    target: object,
    threads: int,
    registers: int,
    shared: int = 0,
    *,
    agprs: int = 0,
    sgprs: int = 0,
    static_smem: int = 0,
    carveout: int = -1,
    barriers: int = 1,
) -> Occupancy:
    """Occupancy of a block of `threads` on `target` with Triton's shared-memory rule (all of it
    dynamic; the limit raised to the opt-in maximum above 48 KB), for any block size.

    registers: NVIDIA registers per thread or AMD arch VGPRs; agprs/sgprs: AMD only;
    static_smem, carveout (percent, -1 default), barriers (the runtime assumes 1): NVIDIA only.
    """
    arch = parse_arch(target)
    if arch.is_nvidia:
        assert arch.cc is not None
        lim = nvidia_limits(arch.cc)
        opted_in = shared > TRITON_DEFAULT_SMEM_LIMIT and lim.max_smem_per_block_optin > TRITON_DEFAULT_SMEM_LIMIT
        res = nvidia_occupancy(arch.cc, threads, registers, shared, static_smem, opted_in=opted_in,
                               carveout=carveout, barriers=barriers)
        if shared > lim.max_smem_per_block_optin:
            res.notes.append(f"Triton refuses this launch: {shared} B of shared memory exceed the "
                             f"{lim.max_smem_per_block_optin} B opt-in maximum of {lim.name} (OutOfResources)")
        elif opted_in:
            res.notes.append(f"the kernel needs more than 48 KB of shared memory, so Triton raises its dynamic "
                             f"shared-memory limit to the opt-in maximum ({res.max_dynamic_smem} B) before launch")
        else:
            res.notes.append("all of Triton's shared memory is dynamic; at or below 48 KB the kernel keeps the "
                             "default 48 KB limit")
        return res
    assert arch.gfx is not None
    return amd_occupancy(arch.gfx, threads, registers, agprs, sgprs, shared + static_smem)


def warp_size(target: object) -> int:
    """Threads per warp (NVIDIA, 32) or wave (AMD CDNA, 64) on `target`."""
    arch = parse_arch(target)
    return 32 if arch.is_nvidia else amd_limits(arch.gfx or "").wave_size


def triton_occupancy(
    target: object,
    num_warps: int,
    registers: int,
    shared: int = 0,
    *,
    agprs: int = 0,
    sgprs: int = 0,
    waves_per_eu: int = 0,
    static_smem: int = 0,
    carveout: int = -1,
    barriers: int = 1,
    num_ctas: int = 1,
) -> Occupancy:
    """Occupancy of a Triton kernel on `target` (sm_90, 90, (9, 0), gfx942, a GPUTarget...).

    registers: NVIDIA registers per thread (`n_regs`) or AMD arch VGPRs (`; NumVgprs`);
    shared: `metadata.shared` in bytes. AMD only: agprs (`; NumAgprs`), sgprs (`.sgpr_count`),
    waves_per_eu (the Triton option, compared with the result in a note). NVIDIA only:
    static_smem, carveout (percent, -1 default), barriers (the runtime assumes 1), num_ctas.
    """
    if num_warps <= 0:
        raise ValueError("num_warps must be positive")
    res = occupancy(target, warp_size(target) * num_warps, registers, shared, agprs=agprs, sgprs=sgprs,
                    static_smem=static_smem, carveout=carveout, barriers=barriers)
    if num_ctas > 1 and res.backend == "cuda":
        res.notes.append(f"num_ctas={num_ctas} launches clusters: cluster placement can lower the resident "
                         "blocks below this per-SM figure (cuOccupancyMaxActiveClusters)")
    if waves_per_eu and res.backend == "hip" and res.waves_per_simd < waves_per_eu:  # type: ignore[union-attr]
        res.notes.append(f"waves_per_eu={waves_per_eu} was requested but the kernel reaches "
                         f"{res.waves_per_simd:g} waves per SIMD")  # type: ignore[union-attr]
    return res


@dataclass(frozen=True)
class KernelResources:
    """The inputs of one occupancy question in Triton's terms (see triton_occupancy)."""

    target: str
    num_warps: int
    registers: int
    shared: int = 0
    agprs: int = 0
    sgprs: int = 0
    waves_per_eu: int = 0
    carveout: int = -1

    def evaluate(self) -> Occupancy:
        return triton_occupancy(**asdict(self))


@dataclass
class WhatIf:
    """The same kernel before and after a change; `changes` names the fields that moved."""

    before: Occupancy
    after: Occupancy
    changes: dict[str, object]
    blocks_per_sm_delta: int
    occupancy_delta: float


def what_if(base: KernelResources, **changes: object) -> WhatIf:
    """Recompute with any of target, num_warps, registers, shared, ... changed.

    `gpu="A100"` is accepted as a change of target to that catalogue GPU's architecture.
    """
    if "gpu" in changes:
        from inspector.hardware.catalogue import find_gpu

        changes = dict(changes)
        changes["target"] = find_gpu(str(changes.pop("gpu"))).arch
    after_inputs = replace(base, **changes)  # type: ignore[arg-type]
    before, after = base.evaluate(), after_inputs.evaluate()
    return WhatIf(before=before, after=after, changes=dict(changes),
                  blocks_per_sm_delta=after.blocks_per_sm - before.blocks_per_sm,
                  occupancy_delta=after.occupancy - before.occupancy)
