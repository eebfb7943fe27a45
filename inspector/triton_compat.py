"""Every place where the inspector touches Triton's internals, in one module.

Why each piece exists, and the Triton versions it was tried on: 3.4.0, 3.5.1, 3.6.0, 3.7.1, 3.8.0 and
3.9.0 (each compiles every bundled kernel for sm_90 and gfx942; `inspector.versions.support`
lists them and refuses older releases, and `python -m inspector versions add` installs them
side by side). Where releases differ, the code says which does what.

- `offline_target`: Triton compiles for whatever `driver.active.get_current_target()` answers.
  To compile GPU-free for any target we stand an object in for the active driver for the duration
  of the compile (`driver.set_active` / `reset_active`, public since 3.2). The JIT's per-device
  binder caches the target, so `JITFunction.device_caches` is cleared on entry and exit.
- `capture_launches`: the example-call convention runs the user's own launch code
  (`kernel[grid](...)`). We replace `JITFunction.run` and `Autotuner.run` for that call so a
  launch is recorded instead of executed (and an autotuner does not benchmark). Calls with
  `warmup=True` pass through, so code that warms a kernel up itself still works.
- `compile_launch`: the recorded launch is compiled through `run(..., warmup=True)`, i.e.
  `JITFunction.warmup`: the exact specialisation a real launch does. While it runs we wrap
  `JITFunction.run` once more to apply name overrides and to see the final arguments (after
  `triton.heuristics` and the chosen autotune config).
- `ptxas_log`: Triton runs ptxas with `-v` and throws the log away unless
  `knobs.nvidia.dump_ptxas_log` is set, in which case it is printed to stdout; we set the knob and
  capture stdout to read registers, spills, stack frame and barriers from ptxas itself.
- `compiler_stderr`: Triton's C++ prints MLIR diagnostics (with the file and line of a failing
  op) and, with MLIR_ENABLE_DUMP / LLVM_IR_ENABLE_DUMP, the IR around every pass to file
  descriptor 2; we point fd 2 at a file while compiling and read both from it.
- `use_cache_dir`: a private Triton cache per inspection, so a compile is never served from the
  user's ~/.triton cache (which would skip ptxas and the pass dumps).
- `compilation_error_location`: Triton's CompilationError carries the function source and an AST
  node whose line is relative to the `def` line; we map it back to the file.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import triton
from triton.backends.compiler import GPUTarget
from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.driver import driver
from triton.runtime.jit import JITFunction, KernelInterface

from .hardware.targets import Target

TRITON_VERSION: str = triton.__version__


def _check_supported() -> None:
    """Refuse a release older than the oldest supported, with what to do (a worker started
    from such an environment fails here, before any kernel is imported)."""
    from .versions.support import OLDEST, check, parse

    try:
        parse(TRITON_VERSION)
    except ValueError:
        return  # a build numbered some other way: let it try
    if parse(TRITON_VERSION)[:2] < OLDEST:
        check(TRITON_VERSION)


_check_supported()

# Options a user may set per compile; Triton's backend `parse_options` accepts these names.
COMMON_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion", "debug")


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
        from .hardware.device_properties import device_properties

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

    def get_active_torch_device(self):
        import torch

        # Tensors made "on the device" by tutorial-style files become meta tensors: shapes,
        # dtypes and alignment without memory.
        return torch.device("meta")

    def get_device_interface(self):
        import torch

        return torch.cuda  # answered for the target by inspector.compile.stand_in_device

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

    from .backends import for_backend

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


# ---- launch capture ----------------------------------------------------------------------------


@dataclass
class Launch:
    """One `kernel[grid](*args, **kwargs)` the example code made."""

    obj: Any  # the JITFunction, Autotuner or Heuristics object launched
    args: tuple
    kwargs: dict[str, Any]
    grid: Any
    frames: list[tuple[str, int, str]] = field(default_factory=list)  # (file, line, function) of its callers
    warmup: bool = False  # a `kernel.warmup(...)` call; its grid is replaced by the compiled kernel's launch

    @property
    def stack(self) -> list[tuple[str, int]]:
        return [(file, line) for file, line, _ in self.frames]

    def site_in(self, path: str) -> int | None:
        """The line in `path` from which the launch was made (the deepest such frame)."""
        lines = [line for file, line, _ in self.frames if os.path.abspath(file) == path]
        return lines[-1] if lines else None

    @property
    def jit(self) -> JITFunction:
        return innermost_jit(self.obj)


def triton_object(obj: Any) -> Any:
    """The outermost of Triton's own kernel objects (JITFunction, Autotuner, Heuristics) under a
    library's wrapper (FlagGems' `libentry` caches compiled kernels and returns its own tuple)."""
    while not isinstance(obj, (JITFunction, Autotuner, Heuristics)):
        obj = obj.fn
    return obj


def innermost_jit(obj: Any) -> JITFunction:
    """The JITFunction under any number of autotune/heuristics wrappers."""
    while not isinstance(obj, JITFunction):
        obj = obj.fn
    return obj


def is_kernel_object(obj: Any) -> bool:
    """A JITFunction, or any KernelInterface wrapping one through `.fn` (Triton's autotune and
    heuristics, and libraries' own wrappers such as FlagGems' `libentry` cache)."""
    for _ in range(8):
        if isinstance(obj, JITFunction):
            return True
        if not isinstance(obj, (KernelInterface, Autotuner, Heuristics)):
            return False
        obj = getattr(obj, "fn", None)
    return False


def kernel_def_line(fn: JITFunction) -> int:
    """File line of the `def` (3.9 has def_file_line_number; 3.6 only the first decorator line)."""
    line = getattr(fn, "def_file_line_number", None)
    if line:
        return int(line)
    start = int(getattr(fn, "starting_line_number", 1))
    for i, text in enumerate(getattr(fn, "raw_src", []) or []):
        if text.lstrip().startswith("def "):
            return start + i
    return start


_recording: list[list["Launch"]] = []  # the lists capture_launches is filling, innermost last


def recorded() -> list["Launch"]:
    """The launches the innermost `capture_launches` has recorded so far."""
    return list(_recording[-1]) if _recording else []


def launch_count() -> int:
    """Launches recorded so far by the innermost `capture_launches` (0 outside one)."""
    return len(_recording[-1]) if _recording else 0


class _RecordedKernel:
    """What a recorded launch returns in place of the CompiledKernel: launching it again
    (`kernel[grid](*args)`, as library launch caches do) does nothing."""

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        return lambda *args, **kwargs: None


@contextlib.contextmanager
def capture_launches() -> Iterator[list[Launch]]:
    """Record launches instead of running them. `warmup` calls are recorded too (they are a
    complete call: arguments, constexprs, options) and still compile, because the code that makes
    them reads the result (`kernel.n_regs`)."""
    launches: list[Launch] = []
    jit_run, tuner_run = JITFunction.run, Autotuner.run

    def site() -> list[tuple[str, int, str]]:
        return [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack()[:-2]]

    def fake_jit_run(self, *args, grid, warmup, **kwargs):
        launches.append(Launch(self, args, dict(kwargs), grid, site(), warmup=bool(warmup)))
        if warmup:
            return jit_run(self, *args, grid=grid, warmup=warmup, **kwargs)
        return _RecordedKernel()

    def fake_tuner_run(self, *args, **kwargs):
        kwargs = dict(kwargs)
        grid = kwargs.pop("grid", None)
        kwargs.pop("warmup", None)
        launches.append(Launch(self, args, kwargs, grid, site()))
        if getattr(self, "best_config", None) is None and self.configs:
            # Wrappers read the tuner's choice after a launch (FlagGems' libentry sizes its grid
            # from it); nothing was timed, so the first configuration stands.
            self.best_config = self.configs[0]
        return _RecordedKernel()

    def fake_compiled_launch(self, grid):
        # `compiled = kernel.warmup(...); compiled[grid](...)`, as the fused-softmax tutorial
        # launches: the warmup recorded the call, this launch gives its real grid.
        def runner(*args, stream=None):
            fn = getattr(self.src, "fn", None)
            for la in reversed(launches):
                if la.warmup and la.jit is fn:
                    la.grid = tuple(grid)
                    break

        return runner

    from triton.compiler.compiler import CompiledKernel

    compiled_getitem = CompiledKernel.__getitem__
    JITFunction.run, Autotuner.run = fake_jit_run, fake_tuner_run
    CompiledKernel.__getitem__ = fake_compiled_launch
    _recording.append(launches)
    try:
        yield launches
    finally:
        _recording.remove(launches)
        JITFunction.run, Autotuner.run = jit_run, tuner_run
        CompiledKernel.__getitem__ = compiled_getitem


class MissingArguments(TypeError):
    """The final call lacks arguments that have no default (`constexpr` says which kind)."""

    def __init__(self, kernel: str, names: list[str], constexpr: bool):
        kind = "constexpr" if constexpr else "argument"
        super().__init__(f"kernel '{kernel}' is called without {kind} {', '.join(names)}")
        self.kernel, self.names, self.constexpr = kernel, names, constexpr


@dataclass
class FinalCall:
    """The arguments the JITFunction was finally compiled with."""

    args: dict[str, Any] = field(default_factory=dict)  # parameter name -> value
    options: dict[str, Any] = field(default_factory=dict)
    grid: Any = None


def compile_launch(
    launch: Launch,
    overrides: dict[str, Any],
    options: dict[str, Any],
    config_kwargs: dict[str, Any] | None = None,
) -> tuple[Any, FinalCall]:
    """Compile a recorded launch through Triton's warmup path; return (CompiledKernel, FinalCall).

    `overrides` replace kernel arguments by parameter name (pointer dtypes, scalars, constexprs);
    `options` are compile options (num_warps, ...); `config_kwargs` an autotune config's kwargs.
    Overrides and options win over heuristics and the autotune config; heuristics see the
    overridden values.
    """
    target_fn = launch.jit
    final = FinalCall(grid=launch.grid)
    jit_run = JITFunction.run

    def observed_run(self, *args, grid, warmup, **kwargs):
        if self is not target_fn:
            return jit_run(self, *args, grid=grid, warmup=warmup, **kwargs)
        names = self.arg_names
        # Python's own binding rules, as a real launch applies them: too many arguments or a value
        # given twice is a TypeError naming the kernel.
        try:
            bound = dict(self.signature.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in names})
                         .arguments)
        except TypeError as e:
            raise TypeError(f"{self.__name__}: {e} (parameters: {', '.join(names)})") from None
        # `stream=` is a launch's, not a compile's (Triton 3.x asserts "stream option is
        # deprecated" when it reaches warmup; Inductor-era code still passes it)
        extra = {k: v for k, v in kwargs.items() if k not in names and k != "stream"}
        for name, value in overrides.items():
            bound[name] = value
        absent = [p for p in self.params if p.name not in bound and not p.has_default]
        if absent:
            constexpr = all(p.is_constexpr for p in absent)
            raise MissingArguments(self.__name__, [p.name for p in absent], constexpr)
        extra.update(options)
        final.args = {n: bound[n] for n in names if n in bound}
        final.options = {k: v for k, v in extra.items() if k not in ("debug", "instrumentation_mode")}
        final.grid = grid
        positional = [bound[n] for n in names if n in bound]
        return jit_run(self, *positional, grid=grid, warmup=True, **extra)

    call_kwargs = dict(launch.kwargs)
    if config_kwargs:
        call_kwargs.update(config_kwargs)
    # The overrides go into the call itself too, so `@triton.heuristics` (which runs before
    # JITFunction.run, reading the arguments by name) sees them: `--const BLOCK=1024` on a kernel
    # whose heuristic reads args["BLOCK"] would otherwise fail with KeyError: 'BLOCK'.
    call_args = list(launch.args)
    for name, value in overrides.items():
        idx = target_fn.arg_names.index(name) if name in target_fn.arg_names else None
        if idx is not None and idx < len(call_args):
            call_args[idx] = value
        else:
            call_kwargs[name] = value
    inner = triton_object(launch.obj)
    if isinstance(inner, Autotuner) and config_kwargs:
        _config_pre_hook(inner, launch, config_kwargs)
    inner = inner.fn if isinstance(inner, Autotuner) else inner
    JITFunction.run = observed_run
    try:
        kernel = inner.run(*call_args, grid=launch.grid, warmup=True, **call_kwargs)
    finally:
        JITFunction.run = jit_run
    return kernel, final


def signature_params(fn: JITFunction) -> list[Any]:
    """Triton's KernelParam list (name, is_constexpr, annotation, default)."""
    return list(fn.params)


def specialization(kernel: Any) -> tuple[dict[str, str], dict[int, list[str]], dict[str, Any]]:
    """(signature types by name, attributes by parameter index, constants by name) of a compile."""
    src = kernel.src
    signature = dict(getattr(src, "signature", {}) or {})
    attrs: dict[int, list[str]] = {}
    for key, values in (getattr(src, "attrs", {}) or {}).items():
        idx = key[0] if isinstance(key, tuple) else int(key)
        attrs[idx] = [f"{name}={val}" for name, val in values]
    consts: dict[str, Any] = {}
    names = list(signature)
    for key, value in (getattr(src, "constants", {}) or {}).items():
        idx = key[0] if isinstance(key, tuple) else key
        name = names[idx] if isinstance(idx, int) and idx < len(names) else str(idx)
        consts[name] = getattr(value, "value", value)
    return signature, attrs, consts


def metadata_dict(kernel: Any) -> dict[str, Any]:
    """Triton's compile metadata as plain JSON-able values."""
    out: dict[str, Any] = {}
    for key, value in kernel.metadata._asdict().items():
        if key == "target":
            out[key] = {"backend": value.backend, "arch": value.arch, "warp_size": value.warp_size}
        elif isinstance(value, (str, int, float, bool)) or value is None:
            out[key] = value
        elif isinstance(value, (list, tuple)):
            out[key] = [v if isinstance(v, (str, int, float, bool)) else repr(v) for v in value]
        else:
            out[key] = repr(value)
    return out


def load_native(kernel: Any) -> dict[str, int]:
    """Load the compiled kernel on the local GPU; the driver's registers, spills, max threads."""
    kernel._init_handles()
    return {"registers": kernel.n_regs, "spills": kernel.n_spills, "max_threads": kernel.n_max_threads}


# ---- side channels: ptxas log, pass dumps, private cache -------------------------------------


@contextlib.contextmanager
def ptxas_log() -> Iterator[io.StringIO]:
    """Capture what Triton prints, including ptxas's `-v` log (registers, spills, barriers)."""
    from triton import knobs

    buf = io.StringIO()
    if not hasattr(knobs.nvidia, "dump_ptxas_log"):  # 3.4: no knob (see _ptxas_log_copied)
        with contextlib.redirect_stdout(buf), _ptxas_log_copied(buf):
            yield buf
        return
    old = knobs.nvidia.dump_ptxas_log
    knobs.nvidia.dump_ptxas_log = True
    try:
        with contextlib.redirect_stdout(buf):
            yield buf
    finally:
        knobs.nvidia.dump_ptxas_log = old


@contextlib.contextmanager
def _ptxas_log_copied(buf: io.StringIO) -> Iterator[None]:
    """Triton 3.4 runs ptxas with -v into a temporary log file that it deletes on success: copy
    the log into `buf` as the call returns (through the backend module's `subprocess`)."""
    try:
        import triton.backends.nvidia.compiler as nv
    except ImportError:
        yield
        return
    real = nv.subprocess

    class _Subprocess:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def run(self, cmd: Any, *args: Any, **kwargs: Any) -> Any:
            result = real.run(cmd, *args, **kwargs)
            log = kwargs.get("stderr")
            if isinstance(cmd, list) and cmd and "ptxas" in os.path.basename(str(cmd[0])) and hasattr(log, "name"):
                with open(log.name, errors="replace") as f:
                    buf.write(f.read())
            return result

    nv.subprocess = _Subprocess()
    try:
        yield
    finally:
        nv.subprocess = real


@contextlib.contextmanager
def compiler_stderr(path: str, pass_dump: bool = False) -> Iterator[None]:
    """Send file descriptor 2 to `path` while inside: Triton's C++ writes MLIR diagnostics there
    (`file.py:27:5: error: ...`), and, with `pass_dump`, the IR around every MLIR and LLVM pass
    (MLIR_ENABLE_DUMP / LLVM_IR_ENABLE_DUMP)."""
    keys = ("MLIR_ENABLE_DUMP", "LLVM_IR_ENABLE_DUMP") if pass_dump else ()
    saved = {k: os.environ.get(k) for k in keys}
    for k in keys:
        os.environ[k] = "1"
    sys.stderr.flush()
    saved_fd = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# An MLIR diagnostic: "/path/kernel.py:27:5: error: failed to legalize operation 'tt.return' ..."
MLIR_DIAGNOSTIC = re.compile(r"^(?P<file>[^\n:]+\.py):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$", re.MULTILINE)


def mlir_error(stderr_text: str, path: str) -> tuple[int, str] | None:
    """(line, message) of the first MLIR error the compiler reported in the user's file."""
    for m in MLIR_DIAGNOSTIC.finditer(stderr_text):
        if os.path.abspath(m.group("file")) == path:
            return int(m.group("line")), m.group("msg").strip()
    return None


@contextlib.contextmanager
def use_cache_dir(path: str) -> Iterator[None]:
    """Point Triton's compile cache at `path` for the duration."""
    from triton import knobs

    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = path
    knobs.cache.dir = path
    try:
        yield
    finally:
        knobs.cache.dir = old if old is not None else knobs.cache.get_triton_dir("cache")
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old


# ---- errors ------------------------------------------------------------------------------------


def compilation_error_location(err: BaseException, fns: list[JITFunction]) -> tuple[JITFunction, int] | None:
    """(function, file line) of the innermost Triton CompilationError whose source we know."""
    from triton.compiler.errors import CompilationError

    by_src = {fn.src: fn for fn in fns}
    best = None
    seen = set()
    e: BaseException | None = err
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, CompilationError) and getattr(e, "node", None) is not None:
            fn = by_src.get(e.src)
            if fn is not None and hasattr(e.node, "lineno"):
                best = (fn, kernel_def_line(fn) + e.node.lineno - 1)
        e = e.__cause__ or e.__context__
    return best


def compilation_error_text(err: BaseException) -> str:
    """The innermost error message Triton attached (e.g. the AttributeError behind the caret)."""
    from triton.compiler.errors import CompilationError

    e: BaseException | None = err
    message = str(err)
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, CompilationError) and e.error_message:
            message = str(e)
        e = e.__cause__ or e.__context__
    return message


def out_of_resources_error(required: int, limit: int, name: str) -> Exception:
    """The exception a launch on the real GPU would raise."""
    from triton.runtime.errors import OutOfResources

    return OutOfResources(required, limit, name)


def is_out_of_resources(err: BaseException) -> bool:
    from triton.runtime.errors import OutOfResources

    return isinstance(err, OutOfResources)


def is_compilation_error(err: BaseException) -> bool:
    from triton.compiler.errors import CompilationError

    return isinstance(err, CompilationError)


def ptxas_error_type() -> type | None:
    try:
        from triton.runtime.errors import PTXASError

        return PTXASError
    except ImportError:  # pragma: no cover - very old Triton
        return None


def heuristic_names(obj: Any) -> set[str]:
    """The arguments `triton.heuristics` wrappers around a kernel compute."""
    names: set[str] = set()
    while not isinstance(obj, JITFunction) and obj is not None:
        if isinstance(obj, Heuristics):
            names |= set(obj.values)
        obj = getattr(obj, "fn", None)
    return names


def _config_pre_hook(tuner: Autotuner, launch: Launch, config_kwargs: dict[str, Any]) -> None:
    """Run the chosen config's `pre_hook` as the autotuner does before launching it: a kernel
    taking host-made tensor descriptors sets their block shapes there (Triton's persistent matmul
    tutorial does)."""
    for c in tuner.configs:
        if c.pre_hook is not None and dict(c.all_kwargs()) == dict(config_kwargs):
            nargs = dict(zip(tuner.arg_names, launch.args))
            nargs.update(launch.kwargs)
            nargs.update(c.all_kwargs())
            c.pre_hook(nargs)
            return


def autotune_configs(obj: Any) -> list[dict[str, Any]]:
    """An autotuner's configs as plain dicts (kwargs plus num_warps/num_stages/...)."""
    obj = triton_object(obj)
    if not isinstance(obj, Autotuner):
        return []
    return [dict(c.all_kwargs()) for c in obj.configs]
