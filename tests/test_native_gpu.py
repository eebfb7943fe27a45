"""On a GPU: native warmup and the GPU-free compile for the same target agree exactly."""

from __future__ import annotations

import pytest

from conftest import KERNELS
from inspector.api import inspect_kernel, native_gpu

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
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        assert native.stages[stage] == offline.stages[stage], f"{stage} differs"
    assert native.resources.registers == offline.resources.registers  # driver's n_regs vs the cubin's
    assert native.resources.shared_bytes == offline.resources.shared_bytes
    assert native.resources.spills == offline.resources.spills
    print(f"{path.stem}: {native.device_name} {gpu['target']}: PTX identical "
          f"({len(native.stages['ptx'].splitlines())} lines), registers {native.resources.registers}, "
          f"shared {native.resources.shared_bytes} B, spills {native.resources.spills}")
