"""Every place where the inspector touches Triton's internals, and why: the one package that does.

Tried on Triton 3.4.0, 3.5.1, 3.6.0, 3.7.1, 3.8.0 and 3.9.0 (each compiles every bundled kernel
for sm_90 and gfx942; `releases` lists them, and `python -m inspector versions add` installs them
side by side). Where releases differ, the code says which does what. Importing this package costs
nothing: each name below loads its module (and Triton) on first use.

The contacts, by module:
- `offline.offline_target`: Triton compiles for whatever `driver.active.get_current_target()`
  answers. To compile GPU-free for any target an offline driver stands in for the active one for
  the duration of the compile (`driver.set_active` / `reset_active`, public since 3.2). The JIT's
  per-device binder caches the target, so `JITFunction.device_caches` is cleared on entry and
  exit. `CompiledKernel._init_handles` is replaced so a warmed-up kernel gets `n_regs`/`n_spills`
  from the binary as a load would give them. Triton 3.4 links AMD binaries with ROCm's `ld.lld`:
  offline without ROCm, `HIPBackend.make_hsaco` keeps the object unlinked.
  `bench_once`/`NOMINAL_MS`: `do_bench` that does not run.
- `launches.capture_launches`: the example-call convention runs the user's own launch code
  (`kernel[grid](...)`): `JITFunction.run` and `Autotuner.run` are replaced for that call, so a
  launch is recorded instead of executed (and an autotuner does not benchmark). Calls with
  `warmup=True` pass through.
- `launches.running_launches` / `relaunch`: timing a candidate fix on a GPU replays the example's
  launches of one kernel: `KernelInterface.__getitem__` (the door of every `kernel[grid](...)`,
  JITFunction, Autotuner and Heuristics alike) is wrapped to record each launch while it runs as
  usual. Tried on 3.6.0 and 3.9.0; `take_since`/`put_back` edit what
  `capture_launches` recorded (a made-up call's oversized launch set aside).
- `launches.compile_launch`: the recorded launch is compiled through `run(..., warmup=True)`, i.e.
  `JITFunction.warmup`, the exact specialisation a real launch does. While it runs, `run` is
  wrapped once more to apply overrides and see the final arguments (after `triton.heuristics` and
  the chosen autotune config); `Autotuner.configs`, `Heuristics.values` and a config's
  `pre_hook` are read there (`autotune_configs`, `heuristic_names`).
- `launches.load_native`: a native inspection reads the driver's registers, spills and max
  threads by loading the binary as `CompiledKernel._init_handles` does (`driver.active.utils.
  load_binary`, with its out-of-resources checks) but without its launcher, a C stub built with
  gcc per signature (most of a small kernel's native inspection:
  docs/performance.md#small-steps-of-an-inspection). Tried on 3.6.0 and 3.9.0's source;
  `_init_handles` itself where a part is missing.
- `side_channels.ptxas_log`: Triton runs ptxas with `-v` and throws the log away unless
  `knobs.nvidia.dump_ptxas_log` is set (then printed to stdout): the knob is set and stdout read.
  `compiler_stderr`: MLIR diagnostics and, with MLIR_ENABLE_DUMP / LLVM_IR_ENABLE_DUMP, the IR
  around every pass go to file descriptor 2, which points at a file while compiling.
  `use_cache_dir`: a private Triton cache per inspection (`knobs.cache.dir`), so a compile is never
  served from the user's ~/.triton cache, which would skip ptxas and the pass dumps.
- `errors`: `CompilationError` carries the function source and an AST node whose line is relative
  to the `def` line (`compilation_error_location` maps it back to the file); `OutOfResources` and
  ptxas errors are told apart by type.
- `launch_hooks` (capturing a real run): `JITFunction.run`, `InterpretedFunction.run`,
  `Autotuner.run`/`_bench`, `knobs.compilation.listener`, `knobs.runtime.launch_enter_hook` /
  `kernel_load_end_hook`; its docstring has the details per release.
- `interpreter_checks.watching`: checking a candidate fix under TRITON_INTERPRET=1 (the tensors
  each launch left, and whether each `tl.multiple_of` promise held): `GridExecutor.__call__` and
  `_patch_lang` of `triton.runtime.interpreter` are wrapped; its docstring has the details.
- `version`: the running release, refused when older than `releases.OLDEST`.
- `releases`: which releases were tried (no Triton import: `versions add` reads it first).

Outside this package, the inspector uses only Triton's public API: `triton.jit`, `triton.testing`
(stood in for GPU-free by `inspector.worker.stand_in_device`), `triton.knobs.nvidia.<tool>.path`
for nvdisasm and cuobjdump (`inspector.backends.nvidia`).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "version": ("TRITON_VERSION", "COMMON_OPTIONS"),
    "offline": ("NOMINAL_MS", "bench_once", "OfflineUtils", "OfflineDriver", "clear_jit_caches", "offline_target",
                "native_target", "native_device_properties", "device_interface", "empty_cache_for_benchmark",
                "clear_cache", "set_cache_dir"),
    "launches": ("Launch", "JITFunction", "triton_object", "innermost_jit", "is_kernel_object", "is_gluon", "kernel_def_line",
                 "recorded", "launch_count", "take_since", "put_back", "capture_launches", "MissingArguments",
                 "FinalCall", "compile_launch", "running_launches", "relaunch",
                 "signature_params", "specialization", "metadata_dict", "load_native", "heuristic_names",
                 "autotune_configs", "pruned_configs", "autotuners_in", "first_jit_call"),
    "side_channels": ("ptxas_log", "compiler_stderr", "MLIR_DIAGNOSTIC", "mlir_error", "use_cache_dir"),
    "interpreter_checks": ("watching", "Watch", "Broken"),
    "errors": ("compilation_error_location", "compilation_error_node", "compilation_error_text", "out_of_resources_error",
               "is_out_of_resources", "is_compilation_error", "ptxas_error_type", "cuda_libdevice_refused"),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
