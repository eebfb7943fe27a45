"""Compiling GPU-free for any target: an offline driver stands in for the active one, a
benchmark that does not run, the binary's figures where a load would give them."""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator

from triton.backends.compiler import GPUTarget
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction

from ..hardware.targets import Target
from . import version  # noqa: F401 - refuses an unsupported release before anything else
from .launches import metadata_dict


# ---- timing that does not run (the offline driver's benchmarker, and triton.testing's stand-in) --

NOMINAL_MS = 1.0  # what a benchmark answers: a positive time, so bandwidth arithmetic still works


def bench_once(fn: Callable, *args: Any, quantiles: Any = None, return_mode: str = "mean", **kwargs: Any) -> Any:
    """`triton.testing.do_bench` that runs `fn` once (its launches are recorded) and answers 1 ms."""
    fn()
    if quantiles:
        return [NOMINAL_MS] * len(quantiles) if len(quantiles) > 1 else NOMINAL_MS
    return NOMINAL_MS if return_mode != "all" else [NOMINAL_MS]


class OfflineUtils:
    """`driver.active.utils` of the offline driver: the device's properties for the target (real
    code sizes grids from them, as the fused-softmax tutorial does); loading a binary is done by
    `_offline_init_handles` instead."""

    def __init__(self, target: Target):
        from ..hardware.device_properties import device_properties

        self._props = device_properties(target)

    def get_device_properties(self, device: int = 0) -> dict[str, Any]:
        keys = ("max_shared_mem", "max_num_regs", "multiprocessor_count", "warpSize", "sm_clock_rate",
                "mem_clock_rate", "mem_bus_width", "arch", "max_threads_per_sm")
        return {k: self._props[k] for k in keys if k in self._props}

    def get_device_capability(self, device: int = 0) -> tuple[int, int]:
        return self._props["major"], self._props["minor"]


class _NoLaunch:
    """`driver.active.launcher_cls` offline: a launch of a compiled kernel does nothing (there is no
    GPU); launches through `kernel[grid](...)` are recorded before they get here."""

    def __init__(self, src: Any, metadata: Any) -> None:
        pass

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None


class OfflineDriver:
    """Stands in for the active driver: the target to compile for, and what real kernel files ask
    of a device (its properties, a benchmarker, a launcher that does not launch, the torch device:
    meta). Loading a compiled kernel answers registers and spills from the binary itself."""

    def __init__(self, target: Target):
        self.target = GPUTarget(target.backend, target.arch, target.warp_size)
        self.utils = OfflineUtils(target)
        self.launcher_cls = _NoLaunch

    def get_current_target(self) -> GPUTarget:
        return self.target

    def get_current_device(self) -> int:
        return 0

    def set_current_device(self, device: int) -> None:
        pass

    def get_current_stream(self, device: int | None = None) -> int:
        return 0

    def get_device_capability(self, device: int = 0) -> tuple[int, int]:
        return self.utils.get_device_capability(device)

    # The device tutorial-style files make their tensors on: meta tensors (shapes, dtypes and
    # alignment without memory); the stand-in device (inspector.worker.stand_in_device) names it
    # "cuda:0", as it shows those tensors to user code, and makes what is created there meta.
    torch_device = "meta"

    def get_active_torch_device(self):
        import torch

        return torch.device(self.torch_device)

    def get_device_interface(self):
        import torch

        return torch.cuda  # answered for the target by inspector.worker.stand_in_device

    def get_benchmarker(self):
        return bench_once

    def get_empty_cache_for_benchmark(self):
        import torch

        return torch.empty(1, dtype=torch.int, device="meta")

    def clear_cache(self, cache: Any) -> None:
        pass

    def map_python_to_cpp_type(self, ty: str) -> str:
        return ty

    def is_active(self) -> bool:
        return True


def _offline_init_handles(self: Any) -> None:
    """`CompiledKernel._init_handles` GPU-free: the checks a real load makes (shared memory, threads)
    and n_regs / n_spills / n_max_threads read from the compiled binary, so code that inspects a
    warmed-up kernel (`kernel.n_regs`, as the fused-softmax tutorial sizes its grid) gets the
    figures the driver would give."""
    from triton.runtime.errors import OutOfResources

    from ..backends import for_backend

    if self.module is not None:
        return
    props = driver.active.utils.get_device_properties()
    if self.metadata.shared > props["max_shared_mem"]:
        raise OutOfResources(self.metadata.shared, props["max_shared_mem"], "shared memory")
    res = for_backend(self.metadata.target.backend).resources(self.asm, metadata_dict(self), "")
    self._run = _NoLaunch(self.src, self.metadata)
    self.function = 0
    self.n_regs = res.registers if res.registers is not None else (res.vgprs or 0)
    self.n_spills = res.spills or 0
    self.n_max_threads = 1024
    if self.metadata.num_warps * self.metadata.warp_size > self.n_max_threads:
        raise OutOfResources(self.metadata.num_warps * self.metadata.warp_size, self.n_max_threads, "threads")
    self.module = object()  # loaded: a second call returns at once


def clear_jit_caches(fns: list[JITFunction]) -> None:
    """Forget binders and compiled kernels cached per device (they remember the target)."""
    for fn in fns:
        fn.device_caches.clear()


@contextlib.contextmanager
def offline_target(target: Target, fns: list[JITFunction] | None = None) -> Iterator[None]:
    """Compile for `target` without a GPU: the offline driver is active inside the block.

    A JITFunction binds its target on first use; pass `fns` that were already used with another
    target so their caches are cleared (functions created inside the block need nothing).
    """
    from triton.compiler.compiler import CompiledKernel

    clear_jit_caches(fns or [])
    driver.set_active(OfflineDriver(target))
    init_handles = CompiledKernel._init_handles
    CompiledKernel._init_handles = _offline_init_handles
    restore_hsaco = _offline_hsaco(target)
    try:
        yield
    finally:
        restore_hsaco()
        CompiledKernel._init_handles = init_handles
        _restore_driver()
        clear_jit_caches(fns or [])


def _offline_hsaco(target: Target) -> Callable[[], None]:
    """Triton 3.4 links the AMD binary with ROCm's `ld.lld` (3.5 and newer link it inside
    Triton). Offline without ROCm, keep the assembled object unlinked: nothing loads it, and the
    inspector reads AMD resources from the AMDGCN text. Returns the undo."""
    if target.backend != "hip":
        return lambda: None
    try:
        from triton.backends.amd.compiler import HIPBackend
    except ImportError:
        return lambda: None
    if not hasattr(HIPBackend, "path_to_rocm_lld"):
        return lambda: None
    try:
        HIPBackend.path_to_rocm_lld()
        return lambda: None  # a linker is there: Triton's own path
    except Exception:  # noqa: BLE001 - "ROCm linker ... not found"
        pass
    originals = {name: HIPBackend.__dict__[name] for name in ("make_hsaco", "hash")}

    def make_hsaco(src: str, metadata: dict, options: Any) -> bytes:
        from triton._C.libtriton import amd

        return amd.assemble_amdgcn(src, options.arch, "")

    def backend_hash(self: Any) -> str:  # Triton's own asks ld.lld for its version
        return f"unlinked-{self.target}"

    HIPBackend.make_hsaco = staticmethod(make_hsaco)
    HIPBackend.hash = backend_hash

    def undo() -> None:
        for name, value in originals.items():
            setattr(HIPBackend, name, value)

    return undo


def _restore_driver() -> None:
    """Make the real driver active again without creating it where it was never made (there may
    be no GPU): 3.5+ make it on first use of `driver._default`; 3.4 holds a lazy proxy in
    `driver.default`, which `reset_active` does not touch."""
    if hasattr(driver, "_default"):
        driver.reset_active() if driver._default is not None else setattr(driver, "_active", None)
    else:
        driver.reset_active()


def native_target() -> Target:
    """The local GPU's target, from Triton's real driver (raises if there is no GPU)."""
    t = driver.active.get_current_target()
    return Target(t.backend, t.arch, t.warp_size)


def native_device_properties() -> dict[str, Any]:
    """Name, capability, SM count, L2, memory of the local GPU (CUDA or ROCm through torch)."""
    import torch

    p = torch.cuda.get_device_properties(torch.cuda.current_device())
    props = {
        "name": p.name,
        "major": p.major,
        "minor": p.minor,
        "multi_processor_count": p.multi_processor_count,
        "total_memory": p.total_memory,
        "L2_cache_size": getattr(p, "L2_cache_size", None),
        "gcnArchName": getattr(p, "gcnArchName", None),
        "max_shared_memory_per_block_optin": getattr(p, "shared_memory_per_block_optin", None),
        "shared_memory_per_multiprocessor": getattr(p, "shared_memory_per_multiprocessor", None),
        "regs_per_multiprocessor": getattr(p, "regs_per_multiprocessor", None),
        "max_threads_per_multi_processor": getattr(p, "max_threads_per_multi_processor", None),
        "warp_size": getattr(p, "warp_size", None),
    }
    try:  # memory clock and bus width give the DRAM bandwidth; only the driver knows them
        utils = driver.active.utils
        dev = utils.get_device_properties(torch.cuda.current_device())
        # the names inspector.hardware.catalogue.gpu_from_properties reads (kHz, bits, kHz)
        props["memory_clock_rate"] = dev.get("mem_clock_rate")
        props["memory_bus_width"] = dev.get("mem_bus_width")
        props["clock_rate"] = dev.get("sm_clock_rate")
    except Exception:  # noqa: BLE001 - optional extras
        pass
    return props


def device_interface() -> Any:
    """The active driver's torch device module (`torch.cuda` on NVIDIA and ROCm), as `do_bench` uses it."""
    return driver.active.get_device_interface()


def empty_cache_for_benchmark() -> Any:
    """The buffer `do_bench` zeroes between runs to flush L2, from the active driver."""
    return driver.active.get_empty_cache_for_benchmark()


def clear_cache(cache: Any) -> None:
    """Flush L2 as `do_bench` does between runs (zeroes `empty_cache_for_benchmark()`'s buffer)."""
    driver.active.clear_cache(cache)


def set_cache_dir(path: str) -> None:
    """Point Triton's cache at `path` for this process: an explicit `knobs.cache.dir` wins over
    TRITON_CACHE_DIR, which a process that imported Triton may already have read."""
    import triton

    triton.knobs.cache.dir = path
