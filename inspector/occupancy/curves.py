"""The occupancy calculator's three what-if curves, as data ready for plotting.

Each curve varies one input of the current kernel and keeps the others: block size (NVIDIA 32..1024
step 32, AMD 64..1024 step 64; non-power-of-two warp counts are included as the calculator shows
them, although Triton only accepts powers of two), registers per thread (NVIDIA 1..255; AMD unified
VGPRs 1..512) and shared memory per block (0 up to the most one block may use, in the
allocation unit; Triton's opt-in above 48 KB applies at each point). Every point is computed by
`triton_occupancy`, so the curves follow exactly the rules of the current-point answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.hardware.architectures import amd_limits, nvidia_limits
from inspector.hardware.targets import parse_arch
from inspector.occupancy.triton_terms import Occupancy, triton_occupancy

NVIDIA_MAX_REGS = 255  # ptxas never allocates more per thread


@dataclass
class Curve:
    """One series: x values, blocks per SM and occupancy at each, and the current point."""

    name: str  # "block_size", "registers" or "shared_memory"
    x_label: str
    x: list[int]
    blocks_per_sm: list[int]
    occupancy: list[float]
    current_x: int
    current_blocks_per_sm: int
    current_occupancy: float


@dataclass
class Curves:
    arch: str
    current: Occupancy
    block_size: Curve
    registers: Curve
    shared_memory: Curve


def _series(name: str, label: str, xs: list[int], results: list[Occupancy], current_x: int,
            current: Occupancy) -> Curve:
    return Curve(name=name, x_label=label, x=xs, blocks_per_sm=[r.blocks_per_sm for r in results],
                 occupancy=[r.occupancy for r in results], current_x=current_x,
                 current_blocks_per_sm=current.blocks_per_sm, current_occupancy=current.occupancy)


def occupancy_curves(
    target: object,
    num_warps: int,
    registers: int,
    shared: int = 0,
    *,
    agprs: int = 0,
    sgprs: int = 0,
    carveout: int = -1,
    smem_step: int | None = None,
) -> Curves:
    """The three calculator curves around the kernel (target, num_warps, registers, shared).

    smem_step: spacing of the shared-memory curve in bytes (default: the allocation unit on
    NVIDIA, 512 B on AMD).
    """
    arch = parse_arch(target)
    current = triton_occupancy(target, num_warps, registers, shared, agprs=agprs, sgprs=sgprs,
                               carveout=carveout)
    if arch.is_nvidia:
        assert arch.cc is not None
        lim = nvidia_limits(arch.cc)
        warp = 32
        warps = range(1, lim.max_threads_per_block // warp + 1)
        reg_xs = list(range(1, NVIDIA_MAX_REGS + 1))
        smem_max = lim.max_smem_per_block_optin
        step = smem_step or lim.smem_alloc_unit

        def at(nw: int = num_warps, regs: int = registers, smem: int = shared) -> Occupancy:
            return triton_occupancy(target, nw, regs, smem, carveout=carveout)

        current_regs = registers
        reg_label = "registers per thread"
    else:
        assert arch.gfx is not None
        alim = amd_limits(arch.gfx)
        warp = alim.wave_size
        warps = range(1, alim.max_workgroup_size // warp + 1)
        reg_xs = list(range(1, alim.max_vgprs_per_wave + 1))
        smem_max = alim.max_lds_per_workgroup
        step = smem_step or 512
        total = current.total_vgprs  # type: ignore[union-attr]

        def at(nw: int = num_warps, regs: int | None = None, smem: int = shared) -> Occupancy:
            # A register point is a unified VGPR total, so it replaces arch+acc together.
            if regs is None:
                return triton_occupancy(target, nw, registers, smem, agprs=agprs, sgprs=sgprs)
            return triton_occupancy(target, nw, regs, smem, sgprs=sgprs)

        current_regs = total
        reg_label = "VGPRs per work-item (arch + acc)"
    block_xs = [w * warp for w in warps]
    smem_xs = list(range(0, smem_max + 1, step))
    return Curves(
        arch=arch.name,
        current=current,
        block_size=_series("block_size", "threads per block", block_xs, [at(nw=w) for w in warps],
                           num_warps * warp, current),
        registers=_series("registers", reg_label, reg_xs, [at(regs=r) for r in reg_xs], current_regs, current),
        shared_memory=_series("shared_memory", "shared memory per block (bytes)", smem_xs,
                              [at(smem=s) for s in smem_xs], shared, current),
    )
