"""What runs inside the worker process: import the user's file, build the call, compile, read.

Never import this in the app server or the CLI's parent: it executes the user's file. The
sandbox runs each request in a worker process of its own, where `inspector.worker.handler`
calls `inspect_file`.
"""

from __future__ import annotations

import base64
import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any

import torch
import triton

from . import kernel_builders
from . import kernel_file as kf
from .. import triton_compat as tc
from ..hardware.architectures import max_shared_per_block
from ..backends import for_backend
from ..backends.amd import dropped_inline_asm
from .errors import error_info
from .passes import split_pass_dump
from ..record import ErrorInfo, InspectRequest, Inspection, Parameter
from .reproduce import standalone_file
from .retyping import (Retyping, halves_for_shared, left_out, next_retyping, say_retyped, sizes_for_dot,
                       sizes_for_shared)
from .stand_in_device import stand_in_device
from . import absent_modules, helion_front, helper_harness, suggestions
from .package_callers import launch_from_package
from ..compile.project import locate
from .wrapper_calls import SHAPE_FAMILIES, call_wrappers
from ..hardware.targets import DEFAULT_TARGET, Target, parse_target

MAX_LOG = 20_000
MAX_PASS_DUMP_BYTES = 200 * 1024 * 1024  # a pass dump beyond this is cut (huge kernels)


class _Fail(Exception):
    def __init__(self, info: ErrorInfo):
        super().__init__(info.message)
        self.info = info


# True in a jailed worker (`handler.in_jail`): its /tmp is a tmpfs dropped with the request, so
# the scratch folder is left to it, off the request's time (docs/performance.md#small-steps-of-an-inspection).
DISPOSABLE_SCRATCH = False


def _resolve_target(name: str) -> tuple[Target, str]:
    if name == "native":
        try:
            return tc.native_target(), "native"
        except Exception as e:  # noqa: BLE001 - no GPU, or no driver
            raise _Fail(ErrorInfo("unknown_target", f"no native GPU: {e}. Pick a target such as sm_90 or gfx942."))
    return parse_target(name), "offline"


def _parameters(fn: Any, final: tc.FinalCall, kernel: Any) -> list[Parameter]:
    signature, attrs, consts = tc.specialization(kernel)
    out = []
    for i, p in enumerate(tc.signature_params(fn)):
        value = final.args.get(p.name, p.default if p.has_default else None)
        ty = signature.get(p.name, "")
        spec = list(attrs.get(i, []))
        if p.is_constexpr:
            kind = "constexpr"
        elif ty.startswith("*"):
            kind = "pointer"
        elif ty == "constexpr":  # a runtime argument Triton specialised as a constant (== 1, None)
            kind = "scalar"
            spec.append(f"=={consts.get(p.name, value)!r} (specialised as a constant)")
        elif ty.startswith("("):  # a tuple argument: its members' types
            kind = "tuple"
        elif "tensordesc" in ty:
            kind = "descriptor"
        else:
            kind = "scalar"
        out.append(Parameter(p.name, kind, ty, kf.describe_value(value), spec))
    return out


def _tried_parameters(fn: Any, launch: tc.Launch, overrides: dict[str, Any]) -> list[Parameter]:
    """The call a failed compile tried, as the record shows it (no specialisation: nothing compiled)."""
    given = dict(zip(fn.arg_names, launch.args))
    given.update(launch.kwargs)
    given.update(overrides)
    out = []
    for p in tc.signature_params(fn):
        value = given.get(p.name, p.default if p.has_default else None)
        if p.is_constexpr:
            kind = "constexpr"
        elif hasattr(value, "data_ptr") or hasattr(value, "dtype") and hasattr(value, "shape"):
            kind = "pointer"
        elif hasattr(value, "base") and hasattr(value, "block_shape"):
            kind = "descriptor"
        else:
            kind = "scalar"
        out.append(Parameter(p.name, kind, "", kf.describe_value(value), []))
    return out


def _mark_given(params: list[Parameter], given: dict[str, Any]) -> list[Parameter]:
    """Each parameter's `given`: what the file's own launch passed (`given`: its values by name;
    empty for a made-up call)."""
    for p in params:
        p.given = kf.describe_value(given[p.name]) if p.name in given else None
    return params


def _read_head(path: str, limit: int = 4 << 20) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(limit)
    except OSError:
        return ""


def _call_error(err: Exception, path: str, launch: tc.Launch, fns: list, stderr_text: str = "") -> ErrorInfo:
    """An error from compiling the recorded call. Arguments Triton cannot bind (too many, an
    unknown keyword, a missing one) are the call's fault: point at the line that launched it.
    A failure inside an MLIR pass is located by the diagnostic the compiler printed."""
    info = error_info(err, path, fns, stage="compile")
    diagnostic = tc.mlir_error(stderr_text, path)
    if diagnostic is not None and info.line is None:
        info.line = diagnostic[0]
        info.message = f"{diagnostic[1]}\n(Triton: {info.message})"
        return info
    binding = isinstance(err, (TypeError, KeyError, tc.MissingArguments)) and not tc.is_compilation_error(err)
    site = launch.site_in(path)
    if binding:
        if info.kind == "compilation":
            info.kind = "bad_argument"
        passed = {**dict(zip(launch.jit.arg_names, launch.args)), **launch.kwargs}
        for m in (info.details or {}).get("missing") or []:
            if m.get("kind") == "argument" and not m.get("suggested"):
                m["suggested"] = suggestions.suggested_argument(launch.jit, m["name"], passed)
        if site is not None and launch.stack:
            info.line = site
            info.details["at_launch"] = True  # the file's own launch lacks them (not a bare kernel)
    elif info.line is None and site is not None:
        info.details["launched_at"] = site
    return info


def _grid(grid: Any, final: tc.FinalCall) -> list[int] | None:
    try:
        if callable(grid):
            grid = grid({**final.args, **final.options})
        return [int(g) for g in grid]
    except Exception:  # noqa: BLE001 - a grid we cannot evaluate is simply not shown
        return None


def inspect_file(request: InspectRequest) -> Inspection:
    """Compile one kernel of a file as the request says; never raises for user errors."""
    path = os.path.abspath(request.file)
    rec = Inspection(file=path, triton_version=triton.__version__, torch_version=torch.__version__)
    log = io.StringIO()
    t0 = time.perf_counter()
    rec.source = request.source  # the text the caller hashed: never read the file twice
    if rec.source is None:
        try:
            rec.source = open(path, encoding="utf-8", errors="replace").read()
        except OSError as e:
            rec.error = ErrorInfo("import", f"cannot read {path}: {e}", path)
            return rec
    workdir = tempfile.mkdtemp(prefix="inspector-")
    module_fns: list[Any] = []
    try:
        target, mode = _resolve_target(request.target or DEFAULT_TARGET)
        rec.target, rec.backend, rec.arch, rec.warp_size, rec.mode = (
            target.name, target.backend, target.arch, target.warp_size, mode)
        if mode == "native":
            rec.device_name = torch.cuda.get_device_name()
        driver_ctx = contextlib.nullcontext() if mode == "native" else tc.offline_target(target)
        device = stand_in_device(None if mode == "native" else target)
        with tc.use_cache_dir(os.path.join(workdir, "triton-cache")), driver_ctx, device, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not (helion_front.is_helion(rec.source)
                    and _inspect_helion(rec, request, path, workdir, log, module_fns,
                                        None if mode == "native" else target)):
                _inspect(rec, request, path, workdir, log, module_fns)
    except _Fail as f:
        rec.error = f.info
    except helion_front.HelionError as e:
        rec.error = e.info
    except BaseException as e:  # noqa: BLE001 - user code may raise anything, even SystemExit or
        # KeyboardInterrupt (the zygote ignores SIGINT, so only the user's code raises it here)
        rec.error = error_info(e, path, module_fns, stage=getattr(e, "_inspector_stage", "compile"))
    finally:
        if not DISPOSABLE_SCRATCH:
            shutil.rmtree(workdir, ignore_errors=True)
    rec.compile_seconds = round(time.perf_counter() - t0, 4)
    text = log.getvalue()
    rec.log = text if len(text) <= MAX_LOG else text[:MAX_LOG] + "\n... (truncated)"
    return rec


def _inspect_helion(rec: Inspection, request: InspectRequest, path: str, workdir: str, log: io.StringIO,
                   module_fns: list, stand_in: Target | None) -> bool:
    """Compile the Triton code Helion generates for the file's kernel (`helion_front`); False when
    the kernel asked for is not a Helion kernel. The record keeps the Helion file as its source;
    an error in the generated code names the Helion line it came from."""
    with _staged("import"):
        front = helion_front.generate(request, path, rec.source, workdir, log, stand_in)
    if front is None:
        return False
    generated = front.generated
    helion_source, rec.source = rec.source, front.request.source
    try:
        _inspect(rec, front.request, generated.file, workdir, log, module_fns)
    except _Fail as f:
        rec.error = f.info
    except Exception as e:  # noqa: BLE001 - classified as inspect_file would, then tied to the Helion line
        rec.error = error_info(e, generated.file, module_fns, stage=getattr(e, "_inspector_stage", "compile"))
    rec.source = helion_source
    helion_front.attach(rec, front, path)
    return True


def _wanted_kernel(wanted: str | None, kernels: list[kf.KernelInfo], path: str) -> kf.KernelInfo | None:
    """The kernel the request names (by the name the module binds, or the function's own name)."""
    if not wanted:
        return None
    for k in kernels:
        if k.name == wanted:
            return k
    for k in kernels:
        if k.jit.__name__ == wanted:
            return k
    raise _Fail(ErrorInfo("bad_argument", f"no kernel named {wanted!r}; the file defines "
                          f"{', '.join(k.name for k in kernels)}", path))


def _stopped_before(wanted: str, stop: kf.Stop | None, source: str, path: str) -> _Fail | None:
    """When the file's own code stopped before it reached the definition of the kernel asked for:
    the error names where and why it stopped, and what to do."""
    if stop is None or not wanted:
        return None
    m = re.search(rf"^(?:async\s+)?def\s+{re.escape(wanted)}\s*\(|^{re.escape(wanted)}\s*=", source, re.M)
    if m is None:
        return None
    line = source.count("\n", 0, m.start()) + 1
    if stop.line is None or line <= stop.line:
        return None
    return _Fail(ErrorInfo(
        "import", f"the file stopped at line {stop.line}, before it defines {wanted!r} (line {line}): "
                  f"{stop.message}. Run GPU-free, its tensors have no values (`.tolist()`, `.item()` and "
                  f"printing them need real data). Move that code under `if __name__ == \"__main__\":` or into "
                  f"a function, or open the file through the code that really calls the kernel on a GPU.",
        stop.file or path, stop.line, {"kernel_line": line, "phase": stop.phase}))


def _launched(launches: list[tc.Launch], info: kf.KernelInfo | None, kernels: list[kf.KernelInfo]) -> bool:
    """Whether the wanted kernel (or, with none named, any kernel of the file) was launched."""
    wanted = [info] if info is not None else kernels
    return any(la.jit is k.jit for la in launches for k in wanted)


def _origin(phases: list[tuple[str, int]], index: int, launch: tc.Launch, path: str) -> str:
    """Which part of the file made the launch: "file", "example", or the test/benchmark's name."""
    phase = [name for name, start in phases if start <= index][-1]
    if phase not in ("entry", "wrapper"):
        return phase
    names = [name for file, _line, name in launch.frames if os.path.abspath(file) == path]
    return names[0] if names else "entry"


def _what_ran(phases: list[tuple[str, int]], module: Any, stops: list[kf.Stop]) -> str:
    """What of the file ran, in words, for a message saying it never launched the kernel."""
    parts = {"file": "running the file (module level and __main__)", "example": "example()",
             "entry": "its tests and perf_report benchmarks", "wrapper": "its wrapper functions",
             "package": "the wrappers of the package modules that import it"}
    ran = ", ".join(parts[name] for name, _ in phases)
    if stops:
        ran += f" ({stops[0].describe()})"
    return ran


def _staged(stage: str):
    """Tag exceptions with the phase they came from (import / example / compile)."""

    @contextlib.contextmanager
    def cm():
        try:
            yield
        except BaseException as e:
            if not hasattr(e, "_inspector_stage"):
                try:
                    e._inspector_stage = stage  # type: ignore[attr-defined]
                except AttributeError:
                    pass
            raise

    return cm()


def _user_code(log: io.StringIO, stage: str):
    """Run a phase of the user's code with its output captured and its exceptions tagged."""
    stack = contextlib.ExitStack()
    stack.enter_context(_staged(stage))
    stack.enter_context(contextlib.redirect_stdout(log))
    stack.enter_context(contextlib.redirect_stderr(log))
    return stack


@dataclass
class _Ran:
    """What running the file's own code left: the module, its kernels and the one wanted, the
    launches it made, and what ran (phases) and where it stopped."""

    module: Any
    kernels: list[kf.KernelInfo]
    info: kf.KernelInfo
    launches: list[tc.Launch]
    phases: list[tuple[str, int]]
    stops: list[kf.Stop]
    wrapper_stops: list[kf.Stop]
    package_origin: str
    # the made-up wrapper call that launched it: its shape family (`wrapper_calls`) and the module
    # whose wrappers made it, with its name (the file's, or a package module's: `package_callers`)
    family: int | None = None
    caller: tuple[Any, str] | None = None


def _run_file(rec: Inspection, request: InspectRequest, path: str, log: io.StringIO, module_fns: list) -> _Ran:
    """Import the file, then run what of it launches kernels (its example(), its tests and
    benchmarks, its wrappers, the package's wrappers) until the wanted kernel is launched."""
    phases: list[tuple[str, int]] = []  # (what ran, index of its first launch)
    stops: list[kf.Stop] = []
    wrapper_stops: list[kf.Stop] = []  # a made-up wrapper call that failed: named only if nothing launched
    package_origin = ""  # the package module's wrapper that launched it (`package_callers`)
    family, caller = None, None
    with tc.capture_launches() as launches:
        phases.append(("file", 0))
        kf.PACKAGE_NOTES.clear()  # (this inspection's: the zygote's warm-up inspects in-process too)
        with _user_code(log, "import"):
            module, stop = kf.execute_file(path, rec.source, request.root)
        log.write(absent_modules.note() + "".join(kf.PACKAGE_NOTES))
        rec.stood_in = absent_modules.stood_in()
        stops += [stop] if stop else []
        kernels = kf.kernels_in(module, path)
        if not kernels and module is not None:  # kernels defined inside a builder function
            with _user_code(log, "import"):
                built = kernel_builders.build(module, rec.source or "")
            kernels = kf.kernels_in(module, path, built)
            if kernels:
                names = ", ".join(f"{b}()" for b in kernel_builders.builders(rec.source or ""))
                log.write(f"note: the file defines its kernels inside {names}: called once to define them, as its "
                          "own launch path does\n")
        module_fns.extend(k.jit for k in kernels)
        if not kernels:
            raise _Fail(ErrorInfo("no_kernel", "no @triton.jit function is defined in this file", path))
        rec.kernels_in_file = [k.name for k in kernels]
        wanted = request.kernel or getattr(module, "KERNEL", None)
        if wanted and not any(wanted in (k.name, k.jit.__name__) for k in kernels):
            early = _stopped_before(wanted, stop, rec.source or "", path)
            if early is not None:
                raise early
        info = _wanted_kernel(wanted, kernels, path)
        if callable(getattr(module, "example", None)) and not _launched(launches, info, kernels):
            phases.append(("example", len(launches)))
            with _user_code(log, "example"):
                stop = kf.run_example(module, path)
            stops += [stop] if stop else []
        if not _launched(launches, info, kernels):
            phases.append(("entry", len(launches)))
            with _user_code(log, "example"):
                stop = kf.run_file_entry_points(module, path, info.jit if info else None)
            stops += [stop] if stop else []
        if not _launched(launches, info, kernels):
            phases.append(("wrapper", len(launches)))
            with _user_code(log, "example"):
                for k in [info] if info else kf.entry_kernels(kernels):
                    tried = call_wrappers(module, k.obj, path)
                    if tried.launched_by:
                        family, caller = tried.family, (module, "__main__")
                        break
                    if tried.error is not None and not wrapper_stops:
                        wrapper_stops.append(kf.stop_from(tried.error, path, tried.failed_wrapper or "wrapper"))
        if not _launched(launches, info, kernels):
            # the launcher lives in another module of the package (kernels/ beside their wrappers)
            phases.append(("package", len(launches)))
            with _user_code(log, "example"):
                for k in [info] if info else kf.entry_kernels(kernels):
                    found = launch_from_package(locate(path, request.root), k.jit.__name__, path)
                    if found.kernel is not None:
                        # that module imported this file under its real name: its kernel object is launched
                        k = kf.KernelInfo(k.name, found.kernel, k.line)
                        kernels = [k if other.name == k.name else other for other in kernels]
                        module_fns.append(k.jit)
                        info, package_origin = k, f"{found.module}.{found.result.launched_by}"
                        family, caller = found.result.family, (sys.modules[found.module], found.module)
                        break
                    if found.result.error is not None and not wrapper_stops:
                        wrapper_stops.append(kf.stop_from(found.result.error, path,
                                                          found.result.failed_wrapper or "wrapper"))
    if info is None:
        own = [la for la in launches if any(k.jit is la.jit for k in kernels)]
        info = next(k for k in kernels if k.jit is own[0].jit) if own else kf.entry_kernels(kernels)[0]
    rec.kernel = info.name
    if stops:
        st = stops[0]
        rec.stopped = {"file": st.file, "line": st.line, "message": st.message, "phase": st.phase}
        log.write(f"note: {st.describe()}; the launches recorded before it are used\n")

    return _Ran(module, kernels, info, launches, phases, stops, wrapper_stops, package_origin, family, caller)


def _configs(rec: Inspection, request: InspectRequest, launch: tc.Launch, info: kf.KernelInfo,
             arg_overrides: dict[str, Any], log: io.StringIO, path: str) -> tuple[list[dict], list[int | None]]:
    """The kernel's autotune configs (as its pruner makes them when the written ones lack a
    constexpr) and the indices to try, in order (None: not autotuned)."""
    configs = tc.autotune_configs(launch.obj)
    needed = ({p.name for p in tc.signature_params(info.jit) if p.is_constexpr and not p.has_default}
              - set(info.jit.arg_names[:len(launch.args)]) - set(launch.kwargs) - set(arg_overrides)
              - tc.heuristic_names(launch.obj))
    if configs and any(needed - set(c) for c in configs):
        # the configs as written lack a constexpr the pruner adds (what a real launch tries)
        pruned = tc.pruned_configs(launch.obj, launch)
        if pruned and not any(needed - set(c) for c in pruned):
            log.write(f"note: the autotune configs as written lack {', '.join(sorted(needed))}; the ones its "
                      f"early_config_prune makes for this call are used, as a real launch does\n")
            configs = pruned
    rec.autotune_configs = [{k: kf.describe_value(v) for k, v in c.items()} for c in configs]
    explicit = request.autotune_index
    if configs and explicit is not None and not 0 <= int(explicit) < len(configs):
        raise _Fail(ErrorInfo("bad_argument", f"autotune config {explicit} out of range: the kernel has "
                              f"{len(configs)} configs", path, info.line))
    # Without an explicit config, take the first one that could launch on the target, as the
    # autotuner on a real GPU skips configs that run out of resources.
    if not configs:
        candidates: list[int | None] = [None]
    elif explicit is not None:
        candidates = [int(explicit)]
    else:
        candidates = list(range(len(configs)))
    return configs, candidates


def _compile_call(launch: tc.Launch, overrides: dict[str, Any], options: dict[str, Any],
                  config_kwargs: dict[str, Any] | None, retyping: Retyping | None, values: dict[str, Any],
                  fns: list, shared_limit: int | None = None, halves: bool = True) -> tuple[Any, Any, dict[str, Any]]:
    """Compile the call; for a made-up one (`retyping` given), retype the pointers Triton's type
    errors point at and compile again (`retyping.py`), and make its made-up block extents smaller
    while the kernel needs more than `shared_limit` bytes of shared memory (then, with `halves`,
    its made-up fp32 data half precision: for the last autotune config, as the autotuner would
    skip the others). Returns (kernel, final call, overrides used)."""
    while True:
        try:
            kernel, final = tc.compile_launch(launch, overrides, options, config_kwargs)
            shared = int(kernel.metadata.shared)
            if retyping is not None and shared_limit is not None and shared > shared_limit:
                own = set(values) - set(launch.shape_derived or ())  # the wrapper's own tiles stay
                smaller = sizes_for_shared(shared, shared_limit, launch.jit, {**values, **overrides}, retyping,
                                           set(config_kwargs or {}) | own)
                if smaller:
                    overrides = {**overrides, **smaller}
                    continue
                halved = halves_for_shared(shared, shared_limit, {**values, **overrides}, retyping) if halves \
                    else None
                if halved:
                    overrides = {**overrides, **halved}
                    continue
            return kernel, final, overrides
        except Exception as e:  # noqa: BLE001 - retried when the error is about a made-up dtype
            filled = left_out(e, overrides, retyping) if retyping is not None else None
            if filled:
                overrides = {**overrides, **filled}
                continue
            own = set(values) - set(launch.shape_derived or ())  # the wrapper's own tiles stay
            grown = sizes_for_dot(e, launch.jit, {**values, **overrides}, retyping, set(config_kwargs or {}) | own) \
                if retyping is not None else None
            if grown:
                overrides = {**overrides, **grown}
                continue
            new = next_retyping(e, launch.jit, [*fns, launch.jit], {**values, **overrides}, retyping) \
                if retyping is not None else None
            if not new:
                raise
            overrides = {**overrides, **new}


def _compile_launch(rec: Inspection, request: InspectRequest, launch: tc.Launch, info: kf.KernelInfo,
                    arg_overrides: dict[str, Any], made_up: bool, fixed: set[str], options: dict[str, Any],
                    module_fns: list, limit: int | None, dump_path: str, log: io.StringIO,
                    path: str) -> tuple[Any, Any, dict[str, Any], dict[str, Any], Retyping | None, str]:
    """Compile `launch` with the first autotune config that fits the target. Returns (kernel, final
    call, overrides used, what the file's own launch passed, the retyping, ptxas's log); raises
    `_Fail` with the call tried left in the record."""
    previous = dict(zip(info.jit.arg_names, launch.args))
    previous.update(launch.kwargs)
    given = {} if made_up else dict(previous)  # what the file's own launch passed, before overrides
    arg_overrides = {k: kf.as_argument(k, v, previous.get(k)) for k, v in arg_overrides.items()}

    configs, candidates = _configs(rec, request, launch, info, arg_overrides, log, path)
    want_passes = request.passes
    # a made-up call's pointer dtypes follow Triton's type errors; the user's own calls stay as made
    # (made-up constexprs, `rec.made_up`, were checked as they are: they stay too)
    retyping = Retyping(fixed=set(fixed)) if made_up else None
    for attempt, index in enumerate(candidates):
        config_kwargs = configs[index] if index is not None else None
        try:
            with _staged("compile"), tc.ptxas_log() as ptxas_buf, tc.compiler_stderr(dump_path, want_passes):
                kernel, final, arg_overrides = _compile_call(launch, arg_overrides, options, config_kwargs, retyping,
                                                             previous, module_fns, limit,
                                                             halves=attempt + 1 == len(candidates))
        except Exception as e:  # noqa: BLE001 - classified, then re-raised as a record
            say_retyped(retyping, log, compiled=False)
            if tc.is_out_of_resources(e) and attempt + 1 < len(candidates):
                log.write(f"autotune config {index} does not fit {rec.target} ({e}): skipped, as the "
                          "autotuner skips it on a real GPU\n")
                continue
            # what was tried stays in the record: the call's values and grid, for the user to see
            rec.parameters = _mark_given(_tried_parameters(info.jit, launch, arg_overrides), given)
            rec.grid = _grid(launch.grid, None) if not callable(launch.grid) else None
            raise _Fail(_call_error(e, path, launch, module_fns, _read_head(dump_path))) from e
        rec.autotune_index = index
        shared = int(kernel.metadata.shared)
        if limit is not None and shared > limit and attempt + 1 < len(candidates):
            log.write(f"autotune config {index} needs {shared} B of shared memory, more than the {limit} B "
                      f"{rec.target} allows per block: skipped, as the autotuner skips it on a real GPU\n")
            continue
        break
    return kernel, final, arg_overrides, given, retyping, ptxas_buf.getvalue()


def _next_family_launch(caller: tuple[Any, str], info: kf.KernelInfo, family: int, path: str, log: io.StringIO,
                        refused: ErrorInfo) -> tuple[tc.Launch, int] | None:
    """The launch the wrappers of `caller` (module, its name) make with the shape families after
    `family`, and its family; None when none launches the kernel. Says in the log what the
    compiler refused."""
    gist = next((line.strip() for line in reversed((refused.message or "").splitlines()) if line.strip()), "")
    with tc.capture_launches() as launches, _user_code(log, "example"):
        tried = call_wrappers(caller[0], info.obj, path, module_name=caller[1], after=family)
    mine = [la for la in launches if la.jit is info.jit]
    if not tried.launched_by or not mine:
        return None
    log.write(f"note: the wrapper's call with made-up shapes (family {family + 1} of {len(SHAPE_FAMILIES)}) did "
              f"not compile ({gist}); it is called again with family {tried.family + 1}\n")
    return mine[0], tried.family


def _inspect(rec: Inspection, request: InspectRequest, path: str, workdir: str, log: io.StringIO, module_fns: list) -> None:
    ran = _run_file(rec, request, path, log, module_fns)
    module, info, launches = ran.module, ran.info, ran.launches
    phases, stops, wrapper_stops, package_origin = ran.phases, ran.stops, ran.wrapper_stops, ran.package_origin
    family, caller = ran.family, ran.caller
    overrides = {k: kf.parse_value(v) if isinstance(v, str) else v for k, v in request.args.items()}
    consts = {k: kf.parse_value(v, for_const=True) if isinstance(v, str) else v
              for k, v in request.consts.items()}
    options = {k: kf.parse_value(v) if isinstance(v, str) else v for k, v in request.options.items()}

    index = next((i for i, la in enumerate(launches) if la.jit is info.jit), None)
    launch = launches[index] if index is not None else None
    arg_overrides = {**overrides, **consts}
    made_up = launch is None  # a call from the signature; made-up inputs to a wrapper are found below
    try:
        kf.check_overrides(info, arg_overrides)
        if launch is None:
            ran = _what_ran(phases, module, stops or wrapper_stops)
            if helper_harness.returns_value(info.jit):
                # a device function: compiled inside the smallest kernel that calls it
                info = helper_harness.harness_for(info, workdir)
                module_fns.append(info.jit)
                log.write(f"note: {rec.kernel} returns a value (a device function, inlined where it is "
                          f"called): compiled inside {info.jit.__name__}, a kernel the inspector wrote that "
                          f"loads each argument from a buffer (fp32 unless --arg says otherwise) and stores "
                          f"the result\n")
                launch = kf.signature_call(info, arg_overrides, ran)
                rec.call_origin = "harness"
            else:
                launch = kf.signature_call(info, arg_overrides, ran)
                rec.call_origin = "signature"
        else:
            rec.call_origin = _origin(phases, index, launch, path)
            made_up = [name for name, start in phases if start <= index][-1] in ("wrapper", "package")
            if rec.call_origin == "package":
                rec.call_origin = package_origin
    except kf.KernelFileError as e:
        e.file = e.file or path
        if e.kind != "missing_constexpr" or not e.details.get("missing"):
            raise
        suggestions.check_offer(e, info, arg_overrides, options, module_fns, _compile_call)
        if not request.make_up or e.details.get("check") not in ("ok", "other"):
            raise
        launch, made = suggestions.made_up_call(rec, info, e.details["missing"], arg_overrides, ran, log,
                                                checked=e.details["check"] == "ok")
        if rec.stopped is None and wrapper_stops:  # the wrapper that did not get as far as a launch
            st = wrapper_stops[0]
            rec.stopped = {"file": st.file, "line": st.line, "message": st.message, "phase": st.phase}
        arg_overrides.update(made)  # constexprs reach the compile as overrides do
    limit = max_shared_per_block(rec.backend, rec.arch)
    # in a sandboxed worker, the file its parent reads if the compiler kills it (an LLVM assertion's
    # message; `inspector.isolation.request_processes.COMPILER_OUTPUT_ENV`)
    dump_path = os.environ.get("TRITON_INSPECTOR_COMPILER_OUTPUT") or os.path.join(workdir, "passes.txt")
    fixed = set(overrides) | set(consts) | {m["name"] for m in rec.made_up}
    first: tuple[_Fail, Any, Any] | None = None  # the first family's refusal, and the call it tried
    while True:
        try:
            kernel, final, arg_overrides, given, retyping, ptxas_text = _compile_launch(
                rec, request, launch, info, arg_overrides, made_up, fixed, options, module_fns, limit, dump_path,
                log, path)
            break
        except _Fail as failed:
            # a wrapper's call made of made-up shapes that the compiler refuses (a size the wrapper
            # derives from one tensor and checks against another's: `BLOCK = next_power_of_2(D - ROPE)`
            # of 0): the same wrapper, called with the next shape family
            if not (made_up and family is not None and caller is not None and failed.info.kind == "compilation"):
                raise
            first = first or (failed, rec.parameters, rec.grid)
            other = _next_family_launch(caller, info, family, path, log, failed.info)
            if other is None:  # none compiles: the first call's refusal is the one to read
                rec.parameters, rec.grid = first[1], first[2]
                raise first[0] from None
            launch, family = other
            arg_overrides = {**overrides, **consts}
    say_retyped(retyping, log, compiled=True)
    user_out = "\n".join(l for l in ptxas_text.splitlines() if "ptxas" not in l and not l.startswith("    ")).strip()
    if user_out:
        log.write(user_out + "\n")

    backend = for_backend(rec.backend)
    asm = kernel.asm
    rec.metadata = tc.metadata_dict(kernel)
    # NVIDIA's resources may need cuobjdump (a noticeable share of a small kernel's compile:
    # docs/performance.md#small-steps-of-an-inspection): it runs while the rest of the record is
    # made (and the binary loads, natively).
    resources = backend.start_resources(asm, rec.metadata, ptxas_text)
    rec.stages = {name: asm[name] for name in backend.STAGES if name in asm and isinstance(asm[name], str)}
    defer = [s for s in backend.DEFERRABLE if s in request.defer]
    rec.stages.update(backend.extra_stages(asm, skip=defer))
    if defer:
        rec.deferred, rec.binary = defer, base64.b64encode(backend.binary(asm)).decode()
    rec.options = {k: rec.metadata.get(k) for k in tc.COMMON_OPTIONS if k in rec.metadata}
    rec.options.update({k: v for k, v in final.options.items() if k not in rec.options})
    rec.parameters = _mark_given(_parameters(info.jit, final, kernel), given)
    rec.grid = _grid(final.grid, final)
    try:
        rec.reproducer = standalone_file(info.jit, final, rec.grid, path, rec.call_origin)
    except Exception as e:  # noqa: BLE001 - a reproducer we cannot write never fails the compile
        log.write(f"note: no standalone reproducer ({type(e).__name__}: {e})\n")
    if request.passes and os.path.exists(dump_path):
        with open(dump_path, encoding="utf-8", errors="replace") as f:
            rec.passes = split_pass_dump(f.read(MAX_PASS_DUMP_BYTES))
    if rec.backend == "hip":  # compiled, yet not what the file says: said where the compile is read
        for text, _, line in dropped_inline_asm(rec.stages.get("llir", ""), rec.stages.get("amdgcn", "")):
            log.write(f"warning: the inline assembly `{text.strip()[:60]}`{f' at line {line}' if line else ''} is "
                      f"not in the {rec.target} code: AMD's code generator drops assembly written for NVIDIA "
                      "without an error, and what it computes is undefined there\n")

    if rec.mode == "native":
        with _staged("compile"):
            loaded = tc.load_native(kernel)  # raises OutOfResources as a launch would
        rec.resources = resources()
        rec.resources.registers = loaded["registers"]
        rec.resources.spills = loaded["spills"]
        rec.resources.max_threads = loaded["max_threads"]
        rec.resources.source = "driver"
    else:
        rec.resources = resources()
        if limit is not None and rec.resources.shared_bytes > limit:
            err = tc.out_of_resources_error(rec.resources.shared_bytes, limit, "shared memory")
            rec.error = ErrorInfo("out_of_resources", f"{err} (a launch on {rec.target} would raise this)",
                                  path, info.line,
                                  {"required": rec.resources.shared_bytes, "limit": limit, "name": "shared memory"})
