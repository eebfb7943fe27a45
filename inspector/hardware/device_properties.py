"""What a GPU of a compile target reports about itself, as Triton's driver and torch report it.

GPU-free compiles answer device queries (`driver.active.utils.get_device_properties`,
`torch.cuda.get_device_properties`) for the target from the GPU catalogue (`inspector.hardware.catalogue`: the
target's representative part) and the architecture's limits (`inspector.hardware.architectures`).
"""

from __future__ import annotations

import types
from typing import Any

from .architectures import AMD_LIMITS, nvidia_limits
from .catalogue import GPUS, REPRESENTATIVE, gpu_for_target
from .targets import Target


def _amd_capability(arch: str) -> tuple[int, int]:
    """torch on ROCm reports gfx942 as (9, 4), gfx90a as (9, 0), gfx1100 as (11, 0)."""
    digits = arch[3:]
    major = int(digits[:-2])
    minor = int(digits[-2], 16) if len(digits) >= 2 else 0
    return major, minor


def device_properties(target: Target) -> dict[str, Any]:
    """The target's GPU as Triton's `driver.active.utils.get_device_properties` and torch's
    `get_device_properties` describe it, from the catalogue's representative part and the
    architecture's limits. Keys: Triton's (max_shared_mem, max_num_regs, multiprocessor_count,
    warpSize, sm_clock_rate, mem_clock_rate, mem_bus_width; arch and max_threads_per_sm on AMD)
    plus `name`, `major`, `minor`, `total_memory`, `L2_cache_size`."""
    gpu = gpu_for_target(target.name)
    if gpu is None:  # an architecture with no catalogue part: the closest one of its vendor
        same_vendor = [GPUS[n] for a, n in REPRESENTATIVE.items() if a.startswith(target.name[:3])]
        gpu = same_vendor[-1] if same_vendor else None
    clock_khz = (gpu.boost_clock_mhz or 1500) * 1000 if gpu else 1_500_000
    # Bus width and memory clock only matter through their product (bandwidth): a nominal
    # 5120-bit HBM bus and the clock that gives the catalogue's bandwidth (DDR: 2 transfers).
    bus_bits = 5120
    bandwidth = gpu.memory_bandwidth if gpu else 2e12
    mem_clock_khz = int(bandwidth / (bus_bits / 8) / 2 / 1000)
    if target.backend == "cuda":
        major, minor = target.capability or (9, 0)
        lim = nvidia_limits((major, minor))
        props = {
            "max_shared_mem": lim.max_smem_per_block_optin, "max_num_regs": lim.regs_per_block,
            "multiprocessor_count": gpu.sm_count if gpu else 1, "warpSize": 32,
            "max_threads_per_sm": lim.max_threads_per_sm, "shared_memory_per_multiprocessor": lim.smem_per_sm,
            "regs_per_multiprocessor": lim.regs_per_sm,
        }
        name = f"NVIDIA {gpu.name}" if gpu else f"NVIDIA GPU {target.name}"
    else:
        major, minor = _amd_capability(str(target.arch))
        lim = AMD_LIMITS.get(str(target.arch))
        lds = lim.max_lds_per_workgroup if lim else 64 * 1024
        props = {
            "max_shared_mem": lds, "max_num_regs": 65536,
            "multiprocessor_count": gpu.sm_count if gpu else 1, "warpSize": target.warp_size,
            "arch": f"{target.arch}:sramecc+:xnack-",
            "max_threads_per_sm": (lim.simds_per_cu * lim.max_waves_per_simd * lim.wave_size) if lim else 2048,
            "shared_memory_per_multiprocessor": lim.lds_per_cu if lim else lds,
            "regs_per_multiprocessor": 65536,
        }
        name = f"AMD Instinct {gpu.name}" if gpu else f"AMD GPU {target.arch}"
    props.update({
        "sm_clock_rate": clock_khz, "mem_clock_rate": mem_clock_khz, "mem_bus_width": bus_bits,
        "name": name, "major": major, "minor": minor,
        "total_memory": int(gpu.memory_bytes) if gpu else 80 * 10**9,
        "L2_cache_size": int(gpu.l2_bytes) if gpu else 50 * 2**20,
    })
    return props


def torch_properties(target: Target) -> types.SimpleNamespace:
    """An object shaped like `torch.cuda.get_device_properties(...)` for the target."""
    p = device_properties(target)
    return types.SimpleNamespace(
        name=p["name"], major=p["major"], minor=p["minor"], total_memory=p["total_memory"],
        multi_processor_count=p["multiprocessor_count"], L2_cache_size=p["L2_cache_size"],
        warp_size=p["warpSize"], max_threads_per_multi_processor=p["max_threads_per_sm"],
        max_threads_per_block=1024, regs_per_multiprocessor=p["regs_per_multiprocessor"],
        shared_memory_per_block=48 * 1024 if target.backend == "cuda" else p["max_shared_mem"],
        shared_memory_per_block_optin=p["max_shared_mem"],
        shared_memory_per_multiprocessor=p["shared_memory_per_multiprocessor"],
        gcnArchName=p.get("arch", "NVIDIA"), is_integrated=0, is_multi_gpu_board=0,
        uuid="00000000-0000-0000-0000-000000000000", clock_rate=p["sm_clock_rate"],
        memory_clock_rate=p["mem_clock_rate"], memory_bus_width=p["mem_bus_width"],
    )
