"""NVIDIA occupancy: active blocks per SM, computed exactly as NVIDIA's `cuda_occupancy.h` does.

The header (CUDA 12/13; Triton's wheel ships a copy under `triton/backends/nvidia/include/`) is
the reference; each step below names the header function it follows. The CUDA driver's
`cuOccupancyMaxActiveBlocksPerMultiprocessor` gives the same answers (checked on a GPU by
`tests/occupancy/test_occupancy_gpu.py`; docs/cli.md#occupancy says where it passed).

One deliberate difference: the header sets its limiting-factor bits before the Hopper+ barrier
limit lowers the answer, so a factor can stay flagged although the barrier limit is lower still.
Here the limiters are exactly the factors whose limit equals the final answer (ties all listed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.hardware.architectures import KB, NvidiaLimits, nvidia_limits

# Limiter names, in the order the header tests them.
WARPS, REGISTERS, SHARED_MEMORY, BLOCKS, BARRIERS, VIRTUAL = (
    "warps", "registers", "shared_memory", "blocks", "barriers", "virtual_resources")

# cudaOccRegAllocationMaxPerThread: 256 for CC >= 7.0 (ptxas itself never allocates more than 255).
_HEADER_MAX_REGS_PER_THREAD = 256
# cudaOccMaxVirtualResourceCountPerSM: 128 on CC 10.x, 11.x and 12.x, none before.
_VIRTUAL_RESOURCES_PER_SM = 128


@dataclass
class NvidiaOccupancy:
    """Blocks per SM and everything that decided it. Limits are blocks/SM; None means unlimited."""

    arch: str
    threads: int
    registers: int
    dynamic_smem: int
    static_smem: int
    blocks_per_sm: int
    active_warps: int
    max_warps_per_sm: int
    occupancy: float  # active warps / max warps per SM, 0..1
    limiters: list[str]
    limits: dict[str, int | None]
    warps_per_block: int
    registers_per_warp: int  # allocated: threads' registers rounded up to the 256-register unit
    registers_per_block: int  # allocated: registers_per_warp x warps
    smem_per_block: int  # allocated: static + dynamic + driver reservation, rounded to the unit
    smem_per_sm: int  # the shared-memory carveout the driver would configure (bytes)
    smem_limit_per_block: int  # largest allocation one block may have, reservation included
    max_dynamic_smem: int  # the kernel's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
    carveout: int  # requested carveout in percent, -1 = driver default
    barriers: int
    backend: str = "cuda"
    notes: list[str] = field(default_factory=list)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _align_carveout(size: int, lim: NvidiaLimits) -> int | None:
    """cudaOccAlignUpShmemSizeVoltaPlus: the smallest carveout size >= size (None if none fits)."""
    for kb in lim.carveouts_kb:
        if kb * KB >= size:
            return kb * KB
    return None


def _barrier_multiplier(cc: tuple[int, int]) -> int:
    """cudaOccMaxBlocksPerSMBlockBarrierLimit: barriers available per resident-block slot."""
    major, minor = cc
    if major == 9:
        return 2
    if major == 10:
        return 1 if minor == 1 else 2
    if major == 11:
        return 1 if minor == 0 else 2
    if major == 12:
        return 1
    return 2  # 5.x-8.0 would be 2 (8.x other than 8.0: 1), but the limit applies only from 9.0


def _registers_limit(lim: NvidiaLimits, registers: int, threads: int, warps: int,
                     notes: list[str]) -> tuple[int | None, int, int]:
    """cudaOccMaxBlocksPerSMRegsLimit: (blocks the registers allow, None when unlimited; registers
    per warp; per block). Registers go to warps in units of 256, each of the four sub-partitions
    holds a quarter of the file, and the hardware's per-block check assumes the warps are rounded
    up to a multiple of the four sub-partitions."""
    regs_per_warp = _round_up(registers * lim.warp_size, lim.reg_alloc_unit)
    regs_per_block = regs_per_warp * warps
    regs_assumed = regs_per_warp * _round_up(warps, lim.warp_alloc_granularity)
    if (regs_assumed > lim.regs_per_block or regs_per_block > lim.regs_per_block
            or registers > _HEADER_MAX_REGS_PER_THREAD):
        notes.append(f"{registers} registers x {threads} threads exceed the {lim.regs_per_block} registers "
                     "one block may hold: the launch would fail")
        return 0, regs_per_warp, regs_per_block
    if regs_per_warp == 0:
        return None, regs_per_warp, regs_per_block
    per_partition = (lim.regs_per_sm // lim.warp_alloc_granularity) // regs_per_warp
    return per_partition * lim.warp_alloc_granularity // warps, regs_per_warp, regs_per_block


def nvidia_occupancy(
    cc: tuple[int, int] | int,
    threads: int,
    registers: int,
    dynamic_smem: int = 0,
    static_smem: int = 0,
    *,
    max_dynamic_smem: int | None = None,
    opted_in: bool = False,
    carveout: int = -1,
    barriers: int = 1,
    virtual_resources: int = 0,
) -> NvidiaOccupancy:
    """Active blocks per SM for one kernel launch (cudaOccMaxActiveBlocksPerMultiprocessor).

    threads: block size; registers: per thread (the cubin's NUM_REGS); dynamic_smem: bytes passed
    at launch; static_smem: the cubin's static shared memory. max_dynamic_smem is the kernel's
    MAX_DYNAMIC_SHARED_SIZE_BYTES attribute: 48 KB unless set, or opt-in max - static when
    opted_in. carveout: preferred shared-memory carveout in percent (-1: default). barriers: block
    barriers the kernel uses (the runtime assumes 1). Function attributes follow the runtime's
    conversion from cudaFuncAttributes (FUNC_SHMEM_LIMIT_OPTIN, partitioned caching off).
    """
    lim = nvidia_limits(cc)
    major, minor = lim.cc
    asked = (cc // 10, cc % 10) if isinstance(cc, int) else tuple(cc)
    if threads <= 0:
        raise ValueError("threads must be positive")
    if registers < 0 or dynamic_smem < 0 or static_smem < 0:
        raise ValueError("registers and shared memory must be non-negative")
    if not -1 <= carveout <= 100:
        raise ValueError("carveout is a percentage 0..100, or -1 for the default")
    notes: list[str] = []
    if asked != lim.cc:
        notes.append(f"no limits known for sm_{asked[0]}{asked[1]}: used those of {lim.name}, the closest of its family")

    warps = -(-threads // lim.warp_size)

    # cudaOccMaxBlocksPerSMWarpsLimit
    limit_warps = 0 if threads > lim.max_threads_per_block else lim.max_warps_per_sm // warps

    limit_regs, regs_per_warp, regs_per_block = _registers_limit(lim, registers, threads, warps, notes)

    # cudaOccMaxBlocksPerMultiprocessor
    limit_blocks = lim.max_blocks_per_sm

    # cudaOccMaxBlocksPerSMSmemLimit + cudaOccSMemPerBlock
    reserved = lim.reserved_smem_per_block
    static_total = static_smem + reserved
    smem_alloc = _round_up(static_total + dynamic_smem, lim.smem_alloc_unit)
    if max_dynamic_smem is None:
        max_dynamic_smem = (lim.max_smem_per_block_optin - static_smem) if opted_in else lim.max_smem_per_block_default
    max_usage = static_total + max_dynamic_smem
    per_block_limit = (lim.max_smem_per_block_optin if max_usage > lim.max_smem_per_block_default
                       else lim.max_smem_per_block_default)
    if major >= 8:
        per_block_limit += reserved
    preference = lim.smem_per_sm if carveout == -1 else carveout * lim.smem_per_sm // 100
    aligned = _align_carveout(preference, lim)
    preference = lim.smem_per_sm if aligned is None else aligned
    limit_smem: int | None
    smem_per_sm = preference
    if dynamic_smem > max_dynamic_smem:
        limit_smem = 0
        notes.append(f"dynamic shared memory {dynamic_smem} B exceeds the kernel's limit {max_dynamic_smem} B "
                     "(MAX_DYNAMIC_SHARED_SIZE_BYTES): the launch would fail")
    elif smem_alloc > per_block_limit:
        limit_smem = 0
        notes.append(f"{smem_alloc} B of shared memory per block exceed the {per_block_limit} B a block may have")
    else:
        if preference < smem_alloc:
            # The driver raises the carveout rather than refuse a block that does not fit.
            raised = _align_carveout(smem_alloc, lim)
            smem_per_sm = lim.smem_per_sm if raised is None else raised
        limit_smem = None if smem_alloc == 0 else smem_per_sm // smem_alloc

    # cudaOccMaxBlocksPerSMVirtualResource
    limit_virtual: int | None = None
    if major >= 10 and virtual_resources > 0:
        limit_virtual = _VIRTUAL_RESOURCES_PER_SM // virtual_resources

    limits: dict[str, int | None] = {
        WARPS: limit_warps, REGISTERS: limit_regs, SHARED_MEMORY: limit_smem, BLOCKS: limit_blocks,
    }
    if limit_virtual is not None:
        limits[VIRTUAL] = limit_virtual
    n = min(v for v in limits.values() if v is not None)

    # Hopper onwards: block barriers limit resident blocks too (cudaOccMaxBlocksPerSMBlockBarrierLimit).
    limit_bars: int | None = None
    if major >= 9 and barriers > 0:
        limit_bars = limit_blocks * _barrier_multiplier((major, minor)) // barriers
        n = min(n, limit_bars)
    limits[BARRIERS] = limit_bars

    limiters = [name for name, v in limits.items() if v is not None and v == n]
    active = n * warps
    return NvidiaOccupancy(
        arch=lim.name, threads=threads, registers=registers, dynamic_smem=dynamic_smem,
        static_smem=static_smem, blocks_per_sm=n, active_warps=active,
        max_warps_per_sm=lim.max_warps_per_sm, occupancy=active / lim.max_warps_per_sm,
        limiters=limiters, limits=limits, warps_per_block=warps, registers_per_warp=regs_per_warp,
        registers_per_block=regs_per_block, smem_per_block=smem_alloc, smem_per_sm=smem_per_sm,
        smem_limit_per_block=per_block_limit, max_dynamic_smem=max_dynamic_smem, carveout=carveout,
        barriers=barriers, notes=notes,
    )
