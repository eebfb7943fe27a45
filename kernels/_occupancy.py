"""How many programs of a compiled kernel fit on a GPU at once, as Triton's fused-softmax tutorial
works it out: from the kernel's registers and shared memory and the device's limits. A persistent
kernel launches that many programs and loops over the rest of its work."""

import triton


def resident_programs(compiled, num_warps: int, device) -> int:
    """SMs x the blocks of `compiled` (a loaded kernel: `kernel.warmup(...)`, `_init_handles()`)
    that one SM holds, limited by registers (allocated per warp in units of 256) and shared memory."""
    props = triton.runtime.driver.active.utils.get_device_properties(device.index or 0)
    warp = props.get("warpSize", 32)
    regs_per_warp = -(-max(compiled.n_regs, 1) * warp // 256) * 256
    by_regs = props["max_num_regs"] // (regs_per_warp * num_warps)
    shared = compiled.metadata.shared
    by_shared = props["max_shared_mem"] // shared if shared else by_regs
    return max(min(by_regs, by_shared), 1) * props["multiprocessor_count"]
