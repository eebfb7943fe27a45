"""Recording a launch instead of running it, compiling the recorded launch through
`JITFunction.warmup`, and what a compiled kernel tells (specialisation, metadata, autotune configs,
heuristics)."""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from triton.runtime.autotuner import Autotuner, Heuristics
from triton.runtime.jit import JITFunction, KernelInterface

from . import version  # noqa: F401 - refuses an unsupported release before anything else


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
    # for a made-up call of a wrapper: the constexprs whose values follow the made-up shapes (the
    # rest are the wrapper's own choices); None when not known
    shape_derived: frozenset[str] | None = None
    # for a made-up call of a wrapper: (the wrapper, the arguments of the call that made this
    # launch; `worker.made_up_sizes.made_by`), which a later probe of the same call needs
    made_by: tuple[Any, list] | None = None

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


def is_gluon(fn: Any) -> bool:
    """Whether a JITFunction was written in Gluon (`@gluon.jit`): its source must be compiled by
    Gluon's frontend again, not by `@triton.jit`. Gluon's class lives in a private module
    (`triton.experimental.gluon._runtime`, 3.5 to 3.9), so it is recognised by name."""
    return any(c.__name__ == "GluonJITFunction" for c in type(fn).__mro__)


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


@contextlib.contextmanager
def running_launches() -> Iterator[list[Launch]]:
    """Record each `kernel[grid](...)` (its outermost kernel object, grid and arguments) while it
    runs as usual, so it can be launched again (`relaunch`): a fix's timing replays the example's
    launches of one kernel. `KernelInterface.__getitem__` is the one door every such launch goes
    through (JITFunction, Autotuner and Heuristics alike), on every release we support."""
    launches: list[Launch] = []
    real = KernelInterface.__getitem__

    def getitem(self: Any, grid: Any) -> Callable[..., Any]:
        launcher = real(self, grid)

        def launch(*args: Any, **kwargs: Any) -> Any:
            launches.append(Launch(self, args, dict(kwargs), grid))
            return launcher(*args, **kwargs)
        return launch

    KernelInterface.__getitem__ = getitem  # type: ignore[method-assign]
    try:
        yield launches
    finally:
        KernelInterface.__getitem__ = real  # type: ignore[method-assign]


def relaunch(launch: Launch) -> Any:
    """Launch a recorded `kernel[grid](...)` again, as it was made."""
    return launch.obj[launch.grid](*launch.args, **launch.kwargs)


def take_since(count: int) -> list["Launch"]:
    """Remove and return the launches the innermost `capture_launches` recorded after the first
    `count` (a made-up call whose launch is set aside for a better one)."""
    if not _recording:
        return []
    taken = _recording[-1][count:]
    del _recording[-1][count:]
    return taken


def put_back(launches: list["Launch"]) -> None:
    """Record `launches` again (ones `take_since` set aside), after those recorded since."""
    if _recording:
        _recording[-1].extend(launches)


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
        # every parameter in order, a default where the call left one out: a later argument
        # (an autotune config's EVEN_K) must not slide into an earlier one's place (gemlite's
        # `meta_evict_policy` received True and Triton refused it as an eviction policy)
        positional = [bound[p.name] if p.name in bound else p.default for p in self.params]
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


def _type_text(ty: Any) -> str:
    if isinstance(ty, (tuple, list)):
        return "(" + ", ".join(_type_text(t) for t in ty) + ")"
    return str(ty)


def specialization(kernel: Any) -> tuple[dict[str, str], dict[int, list[str]], dict[str, Any]]:
    """(signature types by name, attributes by parameter index, constants by name) of a compile."""
    src = kernel.src
    # A tuple argument's type is a tuple of types in 3.6 (a string such as "[*bf16,*bf16]" in 3.9):
    # written out as text either way.
    signature = {name: _type_text(ty) for name, ty in (getattr(src, "signature", {}) or {}).items()}
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
    """Load the compiled kernel on the local GPU as a launch would, with the same out-of-resources
    checks (shared memory, tensor memory, threads: they raise `OutOfResources`); the driver's
    registers, spills and max threads per block.

    Not through `CompiledKernel._init_handles`, which also builds the kernel's launcher, a C stub
    compiled with the host compiler for each new signature that only a launch needs; building it
    is most of a small kernel's native inspection (docs/performance.md#small-steps-of-an-inspection).
    This mirrors its loading half (Triton 3.6 to 3.9); where a part it uses is missing,
    `_init_handles` itself."""
    if kernel.module is None:  # not launched yet
        try:
            from triton.compiler.compiler import max_shared_mem
            from triton.runtime.autotuner import OutOfResources
            from triton.runtime.driver import driver
        except ImportError:
            kernel._init_handles()
        else:
            meta = kernel.metadata
            device = driver.active.get_current_device()
            if meta.shared > (limit := max_shared_mem(device)):
                raise OutOfResources(meta.shared, limit, "shared memory")
            tmem = getattr(meta, "tmem_size", None)
            if tmem is not None and tmem > (limit := 576 if meta.target.arch == 107 else 512):
                raise OutOfResources(tmem, limit, "tensor memory")
            _, _, registers, spills, max_threads = driver.active.utils.load_binary(kernel.name, kernel.kernel,
                                                                                    meta.shared, device)
            if (threads := meta.num_warps * driver.active.get_current_target().warp_size) > max_threads:
                raise OutOfResources(threads, max_threads, "threads")
            return {"registers": registers, "spills": spills, "max_threads": max_threads}
    return {"registers": kernel.n_regs, "spills": kernel.n_spills, "max_threads": kernel.n_max_threads}


def heuristic_names(obj: Any) -> set[str]:
    """The arguments `triton.heuristics` wrappers around a kernel compute. A heuristic that reads
    its own argument (`"REQUIRES_GRAD": lambda args: args["REQUIRES_GRAD"]`, cut-cross-entropy's)
    computes nothing: the caller must pass it, so it is not counted."""
    names: set[str] = set()
    while not isinstance(obj, JITFunction) and obj is not None:
        if isinstance(obj, Heuristics):
            names |= {name for name, fn in obj.values.items() if name not in _keys_read(fn)}
        obj = getattr(obj, "fn", None)
    return names


class _Reading(dict):
    """An argument dict that answers 1 for every name and remembers which names were read."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def __getitem__(self, key: Any) -> Any:
        self.read.add(key)
        return 1

    def get(self, key: Any, default: Any = None) -> Any:
        self.read.add(key)
        return 1


def _keys_read(fn: Any) -> set[str]:
    """The argument names a heuristic reads (called once on a dict that answers 1 to everything)."""
    args = _Reading()
    try:
        fn(args)
    except Exception:  # noqa: BLE001 - a heuristic doing arithmetic on tensors: what it read so far
        pass
    return args.read


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


def pruned_configs(obj: Any, launch: Launch) -> list[dict[str, Any]] | None:
    """The configs a real launch of `launch` would try: `Autotuner.prune_configs` (its
    `early_config_prune`, which may also complete or rewrite configs, as gemlite's adds NUM_STAGES)
    on the recorded call's arguments. None without a pruner, or when it cannot run here. (`nargs`
    is what `Autotuner.run` sets before pruning, in 3.4 to 3.9.)"""
    tuner = triton_object(obj)
    if not isinstance(tuner, Autotuner) or not getattr(tuner, "early_config_prune", None):
        return None
    saved = getattr(tuner, "nargs", None)
    tuner.nargs = {**dict(zip(tuner.arg_names, launch.args)), **launch.kwargs}
    try:
        configs = tuner.prune_configs(dict(launch.kwargs))
    except Exception:  # noqa: BLE001 - a pruner that needs real data or a GPU
        return None
    finally:
        tuner.nargs = saved
    return [dict(c.all_kwargs()) for c in configs] or None


def autotuners_in(namespace: dict[str, Any]) -> list[Any]:
    """The `@triton.autotune` objects among a module's globals."""
    return [obj for obj in namespace.values() if isinstance(obj, Autotuner)]


class _FirstCall(Exception):
    """Raised by `first_jit_call`'s `run` once the arguments are seen."""


def first_jit_call(jit: JITFunction, call: Callable[[], Any]) -> tuple[tuple, dict[str, Any]]:
    """Run `call()` until it first launches `jit` for real, after any autotuner or heuristics
    around it filled in their values (an autotuner's first config); return that launch's
    arguments and keyword arguments without running it. Warmups pass through."""
    original = jit.run
    seen: dict[str, Any] = {}

    def run(*args: Any, grid: Any, warmup: Any, **kwargs: Any) -> Any:
        if warmup:
            return original(*args, grid=grid, warmup=warmup, **kwargs)
        seen["args"], seen["kwargs"] = args, kwargs
        raise _FirstCall()

    jit.run = run  # type: ignore[method-assign]
    try:
        call()
    except _FirstCall:
        pass
    finally:
        del jit.run
    if "args" not in seen:
        raise RuntimeError(f"{jit.__name__} was not launched")
    return seen["args"], seen["kwargs"]
