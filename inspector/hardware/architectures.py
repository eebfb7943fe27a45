"""Per-architecture hardware limits that decide what a kernel may use and how many blocks fit.

NVIDIA figures follow `cuda_occupancy.h` (shipped in Triton's wheel under
`triton/backends/nvidia/include/`) and the CUDA C Programming Guide, "Compute Capabilities"
table; a test checks them against the driver on a GPU (tests/occupancy/test_occupancy_gpu.py,
docs/cli.md#occupancy). AMD figures follow the CDNA3/CDNA4 ISA guides and LLVM's AMDGPU backend
documentation (AMDGPUUsage.rst, "Memory Spaces" and "Code Object" sections), cited per field
below.

Everything here is plain data: the occupancy calculator, the compile checks (shared memory that
could never launch) and the GPU catalogue read from it.
"""

from __future__ import annotations

from dataclasses import dataclass

KB = 1024


@dataclass(frozen=True)
class NvidiaLimits:
    """What one streaming multiprocessor of a compute capability offers (cuda_occupancy.h)."""

    cc: tuple[int, int]
    max_warps_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm: int  # bytes, the largest carveout
    carveouts_kb: tuple[int, ...]  # shared-memory carveout sizes the driver may pick
    max_smem_per_block_optin: int  # bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin
    reserved_smem_per_block: int  # bytes the driver keeps per block (CC >= 8.0)
    smem_alloc_unit: int  # bytes
    max_threads_per_block: int = 1024
    warp_size: int = 32
    regs_per_sm: int = 64 * KB
    regs_per_block: int = 64 * KB
    max_regs_per_thread: int = 255
    reg_alloc_unit: int = 256  # registers per warp are allocated in this unit
    # Nsight Compute's "Registers Per Thread" never reads below this on sm_90, whatever fewer the
    # driver gives (benchmarks/register_probe.py; docs/profile.md#registers-below-16). The
    # occupancy is the same either way (a warp's 448 registers round up to 512).
    reported_registers_floor: int = 16
    warp_alloc_granularity: int = 4  # the SM's four sub-partitions
    max_smem_per_block_default: int = 48 * KB  # without the opt-in attribute

    @property
    def name(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size


_SM80_CARVEOUTS = (0, 8, 16, 32, 64, 100, 132, 164)
_SM86_CARVEOUTS = (0, 8, 16, 32, 64, 100)
_SM90_CARVEOUTS = (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)

# Compute capability -> limits. Sources: cuda_occupancy.h (cudaOccDeviceProp defaults and
# cudaOccSMemPerMultiprocessor tables) and the CUDA C Programming Guide, Table "Technical
# Specifications per Compute Capability"; 8.7 (Jetson Orin) and 10.3 (B300) from the same table.
NVIDIA_LIMITS: dict[tuple[int, int], NvidiaLimits] = {
    lim.cc: lim
    for lim in (
        NvidiaLimits((7, 0), 64, 32, 96 * KB, (0, 8, 16, 32, 64, 96), 96 * KB, 0, 256),
        NvidiaLimits((7, 5), 32, 16, 64 * KB, (32, 64), 64 * KB, 0, 256),
        NvidiaLimits((8, 0), 64, 32, 164 * KB, _SM80_CARVEOUTS, 163 * KB, KB, 128),
        NvidiaLimits((8, 6), 48, 16, 100 * KB, _SM86_CARVEOUTS, 99 * KB, KB, 128),
        NvidiaLimits((8, 7), 48, 16, 164 * KB, _SM80_CARVEOUTS, 163 * KB, KB, 128),
        NvidiaLimits((8, 9), 48, 24, 100 * KB, _SM86_CARVEOUTS, 99 * KB, KB, 128),
        NvidiaLimits((9, 0), 64, 32, 228 * KB, _SM90_CARVEOUTS, 227 * KB, KB, 128),
        NvidiaLimits((10, 0), 64, 32, 228 * KB, _SM90_CARVEOUTS, 227 * KB, KB, 128),
        NvidiaLimits((10, 3), 64, 32, 228 * KB, _SM90_CARVEOUTS, 227 * KB, KB, 128),
        NvidiaLimits((12, 0), 48, 24, 100 * KB, _SM86_CARVEOUTS, 99 * KB, KB, 128),
    )
}


@dataclass(frozen=True)
class AmdLimits:
    """What one compute unit of an AMD CDNA architecture offers (its four SIMDs, or EUs)."""

    arch: str
    wave_size: int
    simds_per_cu: int
    max_waves_per_simd: int  # waves-per-EU cap
    vgprs_per_simd_lane: int  # unified VGPR+AGPR file per SIMD lane
    vgpr_alloc_granule: int  # VGPRs are allocated in blocks of this many (unified file)
    max_vgprs_per_wave: int  # VGPRs one wave may address: arch + acc together
    sgprs_per_simd: int
    sgpr_alloc_granule: int
    max_sgprs_per_wave: int  # addressable SGPRs (VCC and the other extra SGPRs come on top)
    lds_per_cu: int  # bytes
    max_lds_per_workgroup: int  # bytes
    max_workgroup_size: int = 1024
    max_arch_vgprs: int = 256  # v0..v255
    max_agprs: int = 256  # a0..a255
    agpr_offset_align: int = 4  # AGPRs start after the arch VGPRs at a multiple of 4


# Sources, per field (CDNA2 gfx90a, CDNA3 gfx942, CDNA4 gfx950 share the register rules):
# - wave_size 64, simds_per_cu 4: LLVM AMDGPUBaseInfo.cpp IsaInfo::getEUsPerCU (4 before gfx10).
# - max_waves_per_simd 8: LLVM IsaInfo::getMaxWavesPerEU ("if (isGFX90A(*STI)) return 8") and
#   ROCm CLR hipamd/src/hip_platform.cpp ihipOccupancyMaxActiveBlocksPerMultiprocessor
#   ("MaxWavesPerSimd = versionMajor <= 9 ? 8 : 16", "Limited by SPI 32 per CU").
# - vgprs_per_simd_lane 512, vgpr_alloc_granule 8, max_vgprs_per_wave 512: LLVM
#   IsaInfo::getTotalNumVGPRs / getVGPRAllocGranule / getAddressableNumVGPRs (FeatureGFX90AInsts:
#   512, 8, 512); CLR reads the same TotalNumVGPRs / VGPRAllocGranule from the ISA metadata.
# - max_arch_vgprs / max_agprs 256, agpr_offset_align 4: LLVM getAddressableNumArchVGPRs and
#   getTotalNumVGPRs(has90AInsts, NumAGPR, NumVGPR) = alignTo(NumVGPR, 4) + NumAGPR.
# - sgprs_per_simd 800, sgpr_alloc_granule 16: CLR rocclr/device/rocm/rocdevice.cpp
#   (sgprsPerSimd_ = 800 for gfx8..gfx9) and hip_platform.cpp (alignUp(usedSGPRs_, 16));
#   max_sgprs_per_wave 102: LLVM IsaInfo::getAddressableNumSGPRs (gfx8+).
# - LDS: 64 KiB per CU and per workgroup on gfx90a/gfx942 (LLVM AMDGPUUsage.rst, "LDS"); gfx950
#   (CDNA4) 160 KiB (AMD CDNA 4 architecture whitepaper; LLVM FeatureAddressableLocalMemorySize163840).
AMD_LIMITS: dict[str, AmdLimits] = {
    lim.arch: lim
    for lim in (
        AmdLimits("gfx90a", 64, 4, 8, 512, 8, 512, 800, 16, 102, 64 * KB, 64 * KB),
        AmdLimits("gfx942", 64, 4, 8, 512, 8, 512, 800, 16, 102, 64 * KB, 64 * KB),
        AmdLimits("gfx950", 64, 4, 8, 512, 8, 512, 800, 16, 102, 160 * KB, 160 * KB),
    )
}


def nvidia_limits(cc: tuple[int, int] | int) -> NvidiaLimits:
    """Limits for a compute capability given as (major, minor) or Triton's integer form (90).

    An unknown minor version falls back to the closest known one of the same major (e.g. 12.1
    uses 12.0's table), because NVIDIA keeps per-SM limits constant within a family.
    """
    if isinstance(cc, int):
        cc = (cc // 10, cc % 10)
    if cc in NVIDIA_LIMITS:
        return NVIDIA_LIMITS[cc]
    same_major = sorted(k for k in NVIDIA_LIMITS if k[0] == cc[0])
    if not same_major:
        raise KeyError(f"no limits known for compute capability {cc[0]}.{cc[1]}")
    below = [k for k in same_major if k[1] <= cc[1]]
    return NVIDIA_LIMITS[below[-1] if below else same_major[0]]


def amd_limits(arch: str) -> AmdLimits:
    """Limits for an AMD architecture name such as 'gfx942' (feature suffixes are ignored)."""
    base = arch.split(":")[0]
    if base not in AMD_LIMITS:
        raise KeyError(f"no occupancy limits known for {arch}")
    return AMD_LIMITS[base]


def max_shared_per_block(backend: str, arch: str | int) -> int | None:
    """Largest shared memory (LDS) one block may use on the target, in bytes; None if unknown.

    NVIDIA: the opt-in maximum, which Triton requests before launching a kernel that needs more
    than 48 KB (the driver's `max_shared_mem` device property). AMD: LDS per workgroup.
    """
    try:
        if backend == "cuda":
            return nvidia_limits(int(arch)).max_smem_per_block_optin
        if backend == "hip":
            return amd_limits(str(arch)).max_lds_per_workgroup
    except KeyError:
        return None
    return None


def max_threads_per_block(backend: str, arch: str | int) -> int | None:
    """Most threads (work-items) one block (workgroup) may have on the target; None if unknown.
    1024 on every NVIDIA GPU since Fermi and on AMD: num_warps=32 is 1024 threads on NVIDIA but
    2048 work-items on a 64-wide AMD wavefront, a launch that fails."""
    try:
        if backend == "cuda":
            return nvidia_limits(int(arch)).max_threads_per_block
        if backend == "hip":
            return amd_limits(str(arch)).max_workgroup_size
    except (KeyError, ValueError):
        return None
    return None


# The memory system's granularity, for judging coalescing (inspector/analysis/coalescing.py):
# (sector bytes, line bytes) of one warp's (wavefront's) request.
# - NVIDIA: L1 and L2 move 32-byte sectors, four to a 128-byte line (CUDA C++ Best Practices
#   Guide, "Coalesced Access to Global Memory"; Nsight Compute's `L2 Theoretical Sectors Global`
#   counts 32-byte sectors).
# - AMD CDNA2 (gfx90a): 64-byte vL1D lines, the size of an L1->L2 request; 128-byte L2 lines.
#   CDNA3/4 (gfx942, gfx950): 128-byte vL1D and L2 lines; reads go to L2 as 128-byte requests,
#   writes and atomics as 64-byte ones (rocprofiler-compute, docs/conceptual/vector-l1-cache.rst,
#   l2-cache.rst and analysis_configs/gfx942/1600_L1_cache.yaml: `128 * TCP_TCC_READ_REQ + 64 *
#   (TCP_TCC_WRITE_REQ + ...ATOMIC...)`). RDNA (gfx10+): 128-byte lines (Mesa ac_gpu_info.c).
def memory_granules(backend: str, arch: str | int = "", direction: str = "load") -> tuple[int, int]:
    """(sector, line) bytes of the memory transactions one warp's request is split into."""
    if backend != "hip":
        return 32, 128
    a = str(arch).split(":")[0].lower()
    if a.startswith("gfx90") or a.startswith("gfx8"):
        return 64, 128
    if a.startswith(("gfx94", "gfx95")):
        return (128 if direction == "load" else 64), 128
    return 128, 128
