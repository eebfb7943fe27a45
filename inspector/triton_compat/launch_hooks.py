"""Where capturing a run touches Triton, in one module, with why and for which versions (the
interpreter, listener and launch-wrapper paths tested GPU-free on Triton 3.6.0 and 3.9.0; the launch
and load hooks fire only on a GPU: tests/capture/test_capture_gpu.py, benchmarks/capture_h200.py).
`inspector.triton_compat` holds the compile side.

- Launches through `kernel[grid](...)`: `JITFunction.run` is wrapped. It returns the compiled
  kernel, whose `src` holds the exact specialisation Triton compiled (signature, constexprs,
  divisibility/alignment attributes) and, once launched, the driver's `n_regs`/`n_spills`. The
  wrapper also gives the launch's real arguments (shapes, strides, offsets, scalars), from which a
  standalone reproducer is written. Warmups pass through unrecorded (they are not launches).
- Under the CPU interpreter (TRITON_INTERPRET=1) `triton.jit` makes an `InterpretedFunction`:
  nothing is compiled and none of Triton's hooks fire, so `InterpretedFunction.run` is wrapped too
  and the specialisation is computed as a launch on a GPU would: Triton's own binder
  (`create_function_from_signature`) and `JITFunction._pack_args` for an sm_90 backend, on a
  JITFunction made from the same Python function (both exist with these signatures in 3.6 and 3.9).
- Autotuning: `Autotuner.run` is wrapped to know which autotuner a launch came from (its
  `best_config` is set before it launches), `Autotuner._bench` to tell its benchmark launches
  from the program's. (3.9's `knobs.autotuning.listener` does not exist in 3.6.)
- Compiles not made through `JITFunction.run` (Inductor's `CachingAutotuner` calls
  `triton.compile` itself): `knobs.compilation.listener`, a single callable in 3.6 and 3.9,
  chained with one already set (tritonparse's), sees every compile, cache hits included.
- Their launches: `knobs.runtime.launch_enter_hook` (a HookChain in 3.6 and 3.9) counts them. The
  listener gives each compiled function a `launch_metadata` (the JITFunction attribute Triton's
  `CompiledKernel.launch_metadata` evaluates for the hook, with the grid, the compile's metadata
  and the arguments by name): launches are counted by compile hash and the first one's arguments
  kept. `knobs.runtime.kernel_load_end_hook` maps CUfunction handles to hashes as well. A
  non-empty launch hook also makes Inductor (torch 2.11+) launch through Triton's launcher instead
  of its static launcher, which calls no hooks. With `time=True`, the enter/exit hooks record CUDA
  events around every launch.
- Inductor compiles in worker processes by default; a capture asks for in-process compiles
  (`compile_threads = 1`, env TORCHINDUCTOR_COMPILE_THREADS=1) so the listener sees them.
- Registers of kernels the program loaded itself (Inductor's) come from the driver:
  `cuFuncGetAttribute(NUM_REGS / LOCAL_SIZE_BYTES)` on the loaded function.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Any, Protocol

import triton
from triton import knobs
from triton.runtime.autotuner import Autotuner
from triton.runtime.jit import JITFunction

from ..hardware.targets import DEFAULT_TARGET

try:
    from triton.runtime.interpreter import InterpretedFunction
except ImportError:  # pragma: no cover - every supported Triton has it
    InterpretedFunction = None  # type: ignore[assignment,misc]

TRITON_VERSION: str = triton.__version__
# Launch keywords Triton adds itself or that never change what is compiled.
INTERNAL_KWARGS = ("debug", "instrumentation_mode", "fpsan_homomorphic_casts")


class Sink(Protocol):
    """What the hooks report to (inspector.capture.recorder.Recorder)."""

    def jit_launch(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        grid: Any,
        kernel: Any,
        tuner: Any,
        benchmarking: bool,
        interpreted: bool,
    ) -> None: ...

    def compiled(self, src: Any, metadata: dict, cache_hit: bool) -> None: ...

    def loaded(self, function: Any, hash: str) -> None: ...

    def hooked_launch(self, function: Any, hash: str | None) -> None: ...

    def launch_arguments(self, hash: str | None, grid: Any, args: dict) -> None: ...

    def timed(self, function: Any, start: Any, end: Any) -> None: ...


class _State(threading.local):
    def __init__(self) -> None:
        self.in_run = 0  # inside a wrapped JITFunction.run (its launch hook call is already counted)
        self.tuners: list[Any] = []  # autotuners whose run is on the stack, innermost last
        self.benchmarking = 0  # inside Autotuner._bench
        self.pending: list[tuple[Any, Any]] = []  # (function, start event) awaiting the exit hook


def as_jit(obj: Any) -> JITFunction | None:
    """The JITFunction for a kernel object: itself, the innermost one under autotune/heuristics
    wrappers, or, for an interpreted function, a JITFunction made from the same Python function
    (so it specialises, compiles and is written out like any other)."""
    while obj is not None and not isinstance(obj, JITFunction):
        if InterpretedFunction is not None and isinstance(obj, InterpretedFunction):
            shadow = obj.__dict__.get("_inspector_jit")
            if shadow is None:
                kw = obj.kwargs
                shadow = JITFunction(
                    obj.fn,
                    do_not_specialize=kw.get("do_not_specialize"),
                    do_not_specialize_on_alignment=kw.get("do_not_specialize_on_alignment"),
                    noinline=kw.get("noinline"),
                )
                obj.__dict__["_inspector_jit"] = shadow
            return shadow
        obj = getattr(obj, "fn", None)
    return obj


_spec_backends: dict[str, Any] = {}


def _backend(target: str = DEFAULT_TARGET) -> Any:
    """A compiler backend for the specialisation of interpreted launches (no driver needed)."""
    if target not in _spec_backends:
        from triton.backends.compiler import GPUTarget
        from triton.compiler import make_backend

        _spec_backends[target] = make_backend(GPUTarget("cuda", int(target[3:]), 32))
    return _spec_backends[target]


def launch_key(jit: JITFunction, args: tuple, kwargs: dict) -> tuple[str, Any]:
    """A key that two launches share exactly when Triton would compile them alike (on an sm_90
    GPU), from Triton's own binder; and what `launch_specialization` needs to spell it out."""
    from triton.runtime.jit import create_function_from_signature

    binder = jit.__dict__.get("_inspector_binder")
    if binder is None:
        binder = create_function_from_signature(jit.signature, jit.params, _backend())
        jit.__dict__["_inspector_binder"] = binder
    kwargs = {k: v for k, v in kwargs.items() if k not in INTERNAL_KWARGS}
    bound, specialization, options = binder(*args, **kwargs)
    return f"{specialization}|{options}", (kwargs, bound, specialization, options)


def launch_specialization(jit: JITFunction, bound_call: Any) -> dict[str, Any]:
    """The specialisation of a launch (`launch_key`'s second value) as Triton computes it:
    {"signature", "constexprs", "attributes", "options"} by parameter name."""
    kwargs, bound, specialization, options = bound_call
    parsed, signature, constexprs, attrs = jit._pack_args(_backend(), kwargs, bound, specialization, options)
    names = jit.arg_names
    out_options = {
        k: getattr(parsed, k)
        for k in ("num_warps", "num_stages", "num_ctas", "maxnreg")
        if hasattr(parsed, k)
    }
    out_options.update({k: v for k, v in kwargs.items() if k not in names})
    return {
        "signature": dict(signature),
        "constexprs": {_path_name(names, p): _plain(v) for p, v in constexprs.items()},
        "attributes": {_path_name(names, p): [f"{a}={b}" for a, b in v] for p, v in attrs.items() if v},
        "options": out_options,
    }


def kernel_specialization(kernel: Any) -> dict[str, Any]:
    """The specialisation a compiled kernel was built with (its ASTSource) and its options."""
    src = kernel.src
    names = list(getattr(src.fn, "arg_names", []) or [])
    meta = kernel.metadata._asdict()
    options = {k: meta[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg") if k in meta}
    return {
        "signature": {str(k): str(v) for k, v in (getattr(src, "signature", {}) or {}).items()},
        "constexprs": {
            _path_name(names, p): _plain(v) for p, v in (getattr(src, "constants", {}) or {}).items()
        },
        "attributes": {
            _path_name(names, p): [f"{a}={b}" for a, b in v]
            for p, v in (getattr(src, "attrs", {}) or {}).items()
            if v
        },
        "options": options,
    }


def compiled_facts(kernel: Any) -> dict[str, Any]:
    """Hash, target, shared memory and, once loaded on a GPU, the driver's registers and spills."""
    meta = kernel.metadata._asdict()
    target = meta.get("target")
    facts: dict[str, Any] = {
        "hash": getattr(kernel, "hash", meta.get("hash")),
        "target": _target_name(target),
        "shared": int(meta.get("shared", 0) or 0),
        "num_warps": meta.get("num_warps"),
        "num_stages": meta.get("num_stages"),
    }
    n_regs = getattr(kernel, "n_regs", None)
    if isinstance(n_regs, int) and getattr(kernel, "module", None) is not None:
        facts["registers"] = n_regs
        facts["spills"] = getattr(kernel, "n_spills", None)
        facts["source"] = "driver"
    return facts


def _target_name(target: Any) -> str:
    if target is None:
        return ""
    backend = getattr(target, "backend", None) or (target.get("backend") if isinstance(target, dict) else "")
    arch = getattr(target, "arch", None) if not isinstance(target, dict) else target.get("arch")
    return f"sm_{arch}" if backend == "cuda" else str(arch)


def _path_name(names: list[str], path: Any) -> str:
    """Parameter name for a specialisation path ((3,) -> names[3]; nested tuples as name[i])."""
    if isinstance(path, str):
        return path
    if isinstance(path, int):
        path = (path,)
    if not path or not isinstance(path[0], int) or path[0] >= len(names):
        return str(path)
    return names[path[0]] + "".join(f"[{i}]" for i in path[1:])


def _plain(value: Any) -> Any:
    """A JSON-able form of a constexpr value (dtypes and objects by their text)."""
    value = getattr(value, "value", value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return str(value)


def driver_resources(function: Any) -> dict[str, int]:
    """Registers and local memory of a loaded CUDA function, from the driver."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return {}
    out: dict[str, int] = {}
    for name, attr in (("registers", 4), ("local_bytes", 3)):  # CU_FUNC_ATTRIBUTE_NUM_REGS, _LOCAL_SIZE_BYTES
        value = ctypes.c_int(0)
        if lib.cuFuncGetAttribute(ctypes.byref(value), attr, ctypes.c_void_p(int(function))) == 0:
            out[name] = value.value
    return out


def inductor_in_process() -> None:
    """Ask Inductor to compile in this process, so the compilation listener sees its kernels."""
    os.environ["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # read when Inductor's config is imported
    config = sys.modules.get("torch._inductor.config")
    if config is not None:  # already imported (importing it here would cost seconds)
        config.compile_threads = 1


class TritonHooks:
    """Installs the wrappers and hooks above for the duration of a capture; reports to `sink`."""

    def __init__(self, sink: Sink, time: bool = False):
        self.sink = sink
        self.time = time
        self.state = _State()
        self._saved: dict[str, Any] = {}
        self._installed = False
        self.replaced: list[str] = []
        self._watched: list[Any] = []  # functions given a launch_metadata (restored on uninstall)

    def install(self) -> None:
        if self._installed:
            return
        sink, state = self.sink, self.state
        jit_run = JITFunction.run
        tuner_run = Autotuner.run
        tuner_bench = Autotuner._bench
        self._saved = {
            "jit_run": jit_run,
            "tuner_run": tuner_run,
            "tuner_bench": tuner_bench,
            "listener": knobs.compilation.listener,
        }

        def run(fn_self, *args, grid, warmup, **kwargs):
            if warmup:
                return jit_run(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            state.in_run += 1
            try:
                kernel = jit_run(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                state.in_run -= 1
            sink.jit_launch(
                fn_self,
                args,
                kwargs,
                grid,
                kernel,
                state.tuners[-1] if state.tuners else None,
                state.benchmarking > 0,
                False,
            )
            return kernel

        def tuned_run(tuner, *args, **kwargs):
            state.tuners.append(tuner)
            try:
                return tuner_run(tuner, *args, **kwargs)
            finally:
                state.tuners.pop()

        def bench(tuner, *args, **kwargs):
            state.benchmarking += 1
            try:
                return tuner_bench(tuner, *args, **kwargs)
            finally:
                state.benchmarking -= 1

        JITFunction.run = run
        Autotuner.run = tuned_run
        Autotuner._bench = bench
        if InterpretedFunction is not None:
            interp_run = InterpretedFunction.run
            self._saved["interp_run"] = interp_run

            def interpreted_run(fn_self, *args, grid, warmup, **kwargs):
                if not warmup:  # recorded first: a launch that fails was still made
                    sink.jit_launch(
                        fn_self,
                        args,
                        kwargs,
                        grid,
                        None,
                        state.tuners[-1] if state.tuners else None,
                        state.benchmarking > 0,
                        True,
                    )
                return interp_run(fn_self, *args, grid=grid, warmup=warmup, **kwargs)

            InterpretedFunction.run = interpreted_run

        previous = knobs.compilation.listener

        def listener(*, src, metadata, metadata_group, times, cache_hit):
            if previous is not None:
                previous(
                    src=src,
                    metadata=metadata,
                    metadata_group=metadata_group,
                    times=times,
                    cache_hit=cache_hit,
                )
            try:
                sink.compiled(src, dict(metadata or {}), bool(cache_hit))
                self._watch_launches(src)
            except Exception:  # noqa: BLE001 - a capture must never break the program's compile
                pass

        knobs.compilation.listener = listener
        self._listener = listener
        self._hooked: list[tuple[str, Any, Any, Any]] = []
        self._add_hook("kernel_load_end_hook", self._loaded)
        self._add_hook("launch_enter_hook", self._enter)
        if self.time:
            self._add_hook("launch_exit_hook", self._exit)
        inductor_in_process()
        self._installed = True

    def uninstall(self) -> None:
        if not self._installed:
            return
        JITFunction.run = self._saved["jit_run"]
        Autotuner.run = self._saved["tuner_run"]
        Autotuner._bench = self._saved["tuner_bench"]
        if "interp_run" in self._saved:
            InterpretedFunction.run = self._saved["interp_run"]
        self._unwatch()
        self.replaced = []  # hooks another tool took over during the capture (what it saw after is lost)
        if knobs.compilation.listener is self._listener:
            knobs.compilation.listener = self._saved["listener"]
        else:
            self.replaced.append("knobs.compilation.listener")
        for name, chain, fn, _ in self._hooked:
            if chain is not None and getattr(knobs.runtime, name) is not chain:
                self.replaced.append(f"knobs.runtime.{name}")
        for name, chain, fn, previous in reversed(self._hooked):
            if chain is not None:
                chain.remove(fn)
            elif getattr(knobs.runtime, name) is fn:
                setattr(knobs.runtime, name, previous)
        self._hooked = []
        self._installed = False

    def _add_hook(self, name: str, fn: Any) -> None:
        """Add `fn` to a runtime hook: to its HookChain (3.6, 3.9), or, where a tool has set a plain
        callable in its place (tritonparse assigns its launch hook), chained after that callable."""
        current = getattr(knobs.runtime, name)
        if hasattr(current, "add") and hasattr(current, "remove"):
            current.add(fn)
            self._hooked.append((name, current, fn, None))
            return

        def chained(*args: Any, **kwargs: Any) -> None:
            if current is not None:
                current(*args, **kwargs)
            fn(*args, **kwargs)

        setattr(knobs.runtime, name, chained)
        self._hooked.append((name, None, chained, current))

    # ---- the hooks themselves --------------------------------------------------------------

    def _watch_launches(self, src: Any) -> None:
        """Give a compiled function a `launch_metadata` (chained to one it has): Triton's launch
        path evaluates it for the launch hook with the launch's grid, the compile's metadata (its
        hash) and the arguments by name, so launches that do not go through `JITFunction.run`
        (Inductor's launcher) are counted by compile and their first arguments kept."""
        fn = getattr(src, "fn", None)
        if self.state.in_run or fn is None or fn.__dict__.get("_inspector_watch") is not None:
            return  # compiled by a launch the run wrapper sees, or watched already
        previous = getattr(fn, "launch_metadata", None)
        sink, state = self.sink, self.state

        def launch_metadata(grid: Any, metadata: Any, args: dict) -> dict:
            extra = dict(previous(grid, metadata, args) or {}) if previous is not None else {}
            if not state.in_run:
                h = getattr(metadata, "hash", None)
                extra["inspector_hash"] = h
                sink.launch_arguments(h, grid, args)
            return extra

        fn.launch_metadata = launch_metadata
        fn.__dict__["_inspector_watch"] = previous if previous is not None else False
        self._watched.append(fn)

    def _unwatch(self) -> None:
        for fn in self._watched:
            previous = fn.__dict__.pop("_inspector_watch", False)
            fn.launch_metadata = previous or None
        self._watched = []

    def _loaded(self, module: Any, function: Any, name: str, metadata_group: Any, hash: str) -> None:
        try:
            self.sink.loaded(function, hash)
        except Exception:  # noqa: BLE001 - never break a kernel's load
            pass

    def _enter(self, metadata: Any) -> None:
        if self.state.in_run and not self.time:
            return  # counted by the run wrapper; nothing to evaluate
        try:
            data = metadata.get() if hasattr(metadata, "get") else dict(metadata or {})
            function = data.get("function")
            if not self.state.in_run:
                self.sink.hooked_launch(function, data.get("inspector_hash"))
            if self.time:
                import torch

                start = torch.cuda.Event(enable_timing=True)
                start.record()
                self.state.pending.append((function, start))
        except Exception:  # noqa: BLE001 - never break a launch
            pass

    def _exit(self, metadata: Any) -> None:
        if not self.state.pending:
            return
        try:
            import torch

            function, start = self.state.pending.pop()
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self.sink.timed(function, start, end)
        except Exception:  # noqa: BLE001 - never break a launch
            pass
