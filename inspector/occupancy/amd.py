"""AMD CDNA occupancy (gfx90a, gfx942, gfx950): workgroups per CU and waves per SIMD.

The arithmetic is the HIP runtime's, ROCm CLR `hipamd/src/hip_platform.cpp`,
`ihipOccupancyMaxActiveBlocksPerMultiprocessor` (what `hipOccupancyMaxActiveBlocksPerMultiprocessor`
answers, AMD's counterpart of the CUDA driver call):

    vgpr_waves = TotalNumVGPRs / alignUp(vgpr_count, VGPRAllocGranule)      (per SIMD)
    sgpr_waves = sgprsPerSimd / alignUp(sgpr_count, 16)
    alu_threads = simdsPerCU * min(MaxWavesPerSimd, vgpr_waves, sgpr_waves) * wave_size
    workgroups = min(alu_threads / alignUp(block, wave_size), LDSPerCU / (static + dynamic LDS))

A workgroup's waves spread over the CU's four SIMDs, so the per-CU wave pool is what counts.
Register counts are the code object's `.vgpr_count` (on gfx90a+ the unified arch+acc total, LLVM
`getTotalNumVGPRs`) and `.sgpr_count` (VCC, flat scratch and XNACK included). The compiler's own
"; Occupancy:" comment in the AMDGCN is the register-only bound: Triton's LDS is dynamic, so LLVM
never sees it, and LLVM's SGPR table (AMDGPUSubtarget::getOccupancyWithNumSGPRs: <=80: 10,
<=88: 9, <=100: 8, else 7) rounds 97..100 SGPRs to 8 waves where the runtime's 16-granule gives 7.
Barrier slots (16 per CU, LLVM getMaxWorkGroupsPerCU) never bind for wave64 workgroups of 2+
waves on CDNA, since 32 wave slots / 2 waves = 16; the runtime ignores them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.hardware.architectures import AmdLimits, amd_limits

# Limiter names (AMD terms).
WAVES, VGPRS, SGPRS, LDS = "waves", "vgprs", "sgprs", "lds"


@dataclass
class AmdOccupancy:
    """Workgroups per CU and what decided it. `blocks_per_sm` is workgroups per CU and
    `active_warps` waves per CU, so NVIDIA and AMD results read alike. Limits are workgroups/CU."""

    arch: str
    threads: int
    vgprs: int  # architectural VGPRs (v registers)
    agprs: int  # accumulation VGPRs (a registers)
    total_vgprs: int  # unified count one wave allocates before rounding
    sgprs: int
    lds: int  # bytes per workgroup (static + dynamic)
    blocks_per_sm: int
    active_warps: int
    max_warps_per_sm: int
    occupancy: float  # waves per CU / wave slots per CU
    waves_per_simd: float  # average over the CU's SIMDs
    limiters: list[str]
    limits: dict[str, int | None]
    waves_per_workgroup: int
    vgprs_allocated: int  # total_vgprs rounded up to the allocation granule
    sgprs_allocated: int
    waves_per_simd_by_vgprs: int
    waves_per_simd_by_sgprs: int | None
    waves_per_simd_by_registers: int  # min(cap, VGPR, SGPR): LLVM's "; Occupancy" when LDS is dynamic
    lds_per_cu: int
    max_waves_per_simd: int
    backend: str = "hip"
    notes: list[str] = field(default_factory=list)


def unified_vgprs(vgprs: int, agprs: int, lim: AmdLimits) -> int:
    """LLVM getTotalNumVGPRs(has90AInsts, NumAGPR, NumVGPR): AGPRs follow the arch VGPRs at a
    4-aligned offset in the unified file; without AGPRs the count is the arch VGPRs."""
    if agprs:
        return -(-vgprs // lim.agpr_offset_align) * lim.agpr_offset_align + agprs
    return vgprs


def amd_occupancy(
    arch: str,
    threads: int,
    vgprs: int,
    agprs: int = 0,
    sgprs: int = 0,
    lds: int = 0,
    *,
    total_vgprs: int | None = None,
) -> AmdOccupancy:
    """Workgroups per CU for a launch of `threads` work-items per workgroup.

    vgprs/agprs: the kernel's arch and acc VGPR counts (`; NumVgprs`, `; NumAgprs`), or give
    total_vgprs (`.vgpr_count`) directly; sgprs: `.sgpr_count`; lds: bytes per workgroup, static
    (`.group_segment_fixed_size`) plus the dynamic LDS given at launch (Triton's `shared`).
    """
    lim = amd_limits(arch)
    if threads <= 0:
        raise ValueError("threads must be positive")
    if min(vgprs, agprs, sgprs, lds) < 0:
        raise ValueError("register and LDS counts must be non-negative")
    notes: list[str] = []
    total = unified_vgprs(vgprs, agprs, lim) if total_vgprs is None else total_vgprs
    waves_per_wg = -(-threads // lim.wave_size)
    aligned_threads = waves_per_wg * lim.wave_size
    cap = lim.max_waves_per_simd

    vgpr_alloc = -(-total // lim.vgpr_alloc_granule) * lim.vgpr_alloc_granule
    vgpr_waves = lim.vgprs_per_simd_lane // vgpr_alloc if vgpr_alloc else cap
    if vgpr_waves == 0 or total > lim.max_vgprs_per_wave:
        notes.append(f"{total} VGPRs exceed the {lim.max_vgprs_per_wave} one wave may address")
        vgpr_waves = 0
    sgpr_alloc = -(-sgprs // lim.sgpr_alloc_granule) * lim.sgpr_alloc_granule
    sgpr_waves = lim.sgprs_per_simd // sgpr_alloc if sgpr_alloc else None

    def workgroups(waves_per_simd: int) -> int:
        return lim.simds_per_cu * waves_per_simd * lim.wave_size // aligned_threads

    too_big = threads > lim.max_workgroup_size
    if too_big:
        notes.append(f"{threads} work-items exceed the {lim.max_workgroup_size} a workgroup may have")
    limits: dict[str, int | None] = {
        WAVES: 0 if too_big else workgroups(cap),
        VGPRS: workgroups(vgpr_waves),
        SGPRS: None if sgpr_waves is None else workgroups(sgpr_waves),
        LDS: None if lds == 0 else lim.lds_per_cu // lds,
    }
    if lds > lim.max_lds_per_workgroup:
        notes.append(f"{lds} B of LDS exceed the {lim.max_lds_per_workgroup} B a workgroup may have")
        limits[LDS] = 0
    n = min(v for v in limits.values() if v is not None)
    limiters = [name for name, v in limits.items() if v is not None and v == n]
    waves = n * waves_per_wg
    slots = lim.simds_per_cu * cap
    by_regs = min(cap, vgpr_waves, cap if sgpr_waves is None else sgpr_waves)
    return AmdOccupancy(
        arch=lim.arch, threads=threads, vgprs=vgprs, agprs=agprs, total_vgprs=total, sgprs=sgprs,
        lds=lds, blocks_per_sm=n, active_warps=waves, max_warps_per_sm=slots,
        occupancy=waves / slots, waves_per_simd=waves / lim.simds_per_cu, limiters=limiters,
        limits=limits, waves_per_workgroup=waves_per_wg, vgprs_allocated=vgpr_alloc,
        sgprs_allocated=sgpr_alloc, waves_per_simd_by_vgprs=vgpr_waves,
        waves_per_simd_by_sgprs=sgpr_waves, waves_per_simd_by_registers=by_regs,
        lds_per_cu=lim.lds_per_cu, max_waves_per_simd=cap, notes=notes,
    )
