"""On a GPU: native warmup and the GPU-free compile for the same target agree exactly."""

from __future__ import annotations

import pytest

from paths import KERNELS
from inspector.compile.api import inspect_kernel, native_gpu

BUNDLED = sorted(p for p in KERNELS.glob("*.py") if not p.name.startswith("_"))


@pytest.mark.gpu
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_native_and_offline_agree(path, sandbox):
    gpu = native_gpu(sandbox)
    assert gpu["available"], gpu
    native = inspect_kernel(path, target="native", sandbox=sandbox, use_cache=False, timeout=600)
    offline = inspect_kernel(path, target=gpu["target"], sandbox=sandbox, use_cache=False, timeout=600)
    assert native.error is None, native.error and native.error.short()
    assert offline.error is None, offline.error and offline.error.short()
    assert native.mode == "native" and offline.mode == "offline"
    assert native.autotune_index == offline.autotune_index
    assert {"ttgir", "llir", "ptx"} <= set(native.stages)
    for stage in ("ttir", "ttgir", "llir", "ptx"):  # a Gluon kernel starts at TTGIR: it has no TTIR
        assert native.stages.get(stage) == offline.stages.get(stage), f"{stage} differs"
    assert native.resources.registers == offline.resources.registers  # driver's n_regs vs the cubin's
    assert native.resources.shared_bytes == offline.resources.shared_bytes
    assert native.resources.spills == offline.resources.spills
    print(f"{path.stem}: {native.device_name} {gpu['target']}: PTX identical "
          f"({len(native.stages['ptx'].splitlines())} lines), registers {native.resources.registers}, "
          f"shared {native.resources.shared_bytes} B, spills {native.resources.spills}")


@pytest.mark.gpu
def test_spilling_kernel_local_memory_matches_the_driver(sandbox):
    """The driver's n_spills (local bytes / 4) equals what we read GPU-free from the cubin."""
    path = KERNELS / "register_spill.py"
    gpu = native_gpu(sandbox)
    native = inspect_kernel(path, target="native", consts={"BLOCK_N": "32768"}, sandbox=sandbox, use_cache=False)
    offline = inspect_kernel(path, target=gpu["target"], consts={"BLOCK_N": "32768"}, sandbox=sandbox,
                             use_cache=False)
    assert native.error is None and offline.error is None
    assert offline.resources.local_bytes > 0 and offline.resources.spill_store_bytes > 0
    assert native.resources.spills == offline.resources.spills == offline.resources.local_bytes // 4
    print(f"register_spill BLOCK_N=32768: driver n_spills {native.resources.spills}, cubin local "
          f"{offline.resources.local_bytes} B, ptxas spill stores {offline.resources.spill_store_bytes} B")
