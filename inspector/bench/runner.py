"""The sweep itself: for each variant and size, check every implementation, then time what passed.

Runs inside the benchmark worker process (`inspector.bench.worker`), never in the app or the
CLI's own process: it imports the kernel file, torch and Triton and runs the user's code.

Per size, on fresh random inputs from `make_inputs`:
1. check: the Triton kernel's output against `reference` (its output buffer poisoned with NaN
   first, so unwritten elements fail), then the PyTorch baseline and its torch.compile'd form
   against the same reference. Whatever fails its check is not timed.
2. time: `bench_graph_time` (median, p20, p80): CUDA graphs of hundreds of calls back to back,
   cycling through copies of the inputs that together exceed 3x the L2 cache, so every call reads
   its inputs from device memory (what do_bench's L2 flush gives) and each timed replay lasts
   about 2 ms (event resolution and launch jitter average out: the run-to-run spread of 5-20 us
   kernels). A call that cannot be captured (it synchronises, reads a value back) is timed by
   `bench_gpu_time` instead: triton.testing.do_bench's measurement (CUDA events around each run, a
   256 MB buffer zeroed before each run) with the host's launch cost kept out of the timed
   interval. Each timing names its timer. Optionally also `do_bench_cudagraph` (graph replay, no
   L2 flush, no copies). This is done in `rounds` rounds (5), each with fresh input copies, the
   implementations interleaved (triton, eager, compile, triton, ...), and the round with the
   median median is kept: one round caught in a clock or power transient, or given unlucky
   placements, no longer sets the figure (run-to-run spread).
GB/s and TFLOP/s follow from the file's `bytes_moved` and `flops` over the median time.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import math
import os
import platform
import subprocess
import traceback
from typing import Any, Callable

from . import protocol
from .timing import QUANTILES, bench_graph_time, clone, nbytes, rotation_count, time_fn
from .records import BenchError, BenchResult, Check, DeviceInfo, Point, Sweep, Timing, size_label
from .settings import DEFAULT_ROUNDS, BenchSettings

# progress(done, total, message): `done` sizes of `total` finished; message says what runs now.
Progress = Callable[[int, int, str], None]


class DeviceLost(Exception):
    """The GPU context is unusable (an illegal address, a launch failure): stop the whole run."""


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# ---- the device -------------------------------------------------------------------------------
def _nvidia_driver() -> str | None:
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        line = out.stdout.strip().splitlines()
        return line[0].strip() if out.returncode == 0 and line else None
    except (OSError, subprocess.SubprocessError):
        return None


def _cuda_driver_version() -> str | None:
    """The CUDA version the installed driver supports, from cuDriverGetVersion (13000 -> '13.0')."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        if lib.cuDriverGetVersion(ctypes.byref(v)) != 0:
            return None
        return f"{v.value // 1000}.{(v.value % 1000) // 10}"
    except OSError:
        return None


def device_info() -> tuple[DeviceInfo, str | None]:
    """The current GPU (or the CPU interpreter) and the software versions; plus the GPU's UUID."""
    import torch
    import triton

    common = dict(
        torch=torch.__version__,
        triton=triton.__version__,
        python=platform.python_version(),
        cuda_runtime=torch.version.cuda,
        hip=getattr(torch.version, "hip", None),
    )
    if not torch.cuda.is_available():
        return DeviceInfo(name="CPU (Triton interpreter)", **common), None
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    hip = common["hip"]
    info = DeviceInfo(
        name=props.name,
        sm_count=props.multi_processor_count,
        capability=getattr(props, "gcnArchName", None) if hip else f"{props.major}.{props.minor}",
        memory_bytes=int(props.total_memory),
        l2_bytes=getattr(props, "L2_cache_size", None),
        driver=None if hip else _nvidia_driver(),
        cuda_driver=None if hip else _cuda_driver_version(),
        **common,
    )
    uuid = getattr(props, "uuid", None)
    return info, str(uuid) if uuid else None


# ---- checking -----------------------------------------------------------------------------------
def _tensors(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return [value]


def compare(impl: str, out: Any, ref: Any, atol: float, rtol: float) -> Check:
    """Elementwise |out - ref| <= atol + rtol |ref| in float64; NaN never passes."""
    import torch

    outs, refs = _tensors(out), _tensors(ref)
    check = Check(impl=impl, ok=False, atol=atol, rtol=rtol)
    if len(outs) != len(refs):
        check.message = f"returned {len(outs)} outputs, the reference {len(refs)}"
        return check
    max_abs, num, den, bad, total = 0.0, 0.0, 0.0, 0, 0
    for o, r in zip(outs, refs):
        o = torch.as_tensor(o)
        r = torch.as_tensor(r, device=o.device)
        if tuple(o.shape) != tuple(r.shape):
            check.message = f"output shape {tuple(o.shape)} differs from the reference's {tuple(r.shape)}"
            return check
        od, rd = o.detach().to(torch.float64), r.detach().to(torch.float64)
        diff = (od - rd).abs()
        within = diff <= atol + rtol * rd.abs()  # False wherever diff is NaN
        bad += int((~within).sum().item())
        total += od.numel()
        if od.numel():
            m = diff.max().item()
            max_abs = m if math.isnan(m) or math.isnan(max_abs) else max(max_abs, m)
        num += float(((od - rd) ** 2).sum().item())
        den += float((rd**2).sum().item())
        del od, rd, diff, within
    check.max_abs_error = max_abs
    check.rel_error = math.sqrt(num / den) if den > 0 else (0.0 if num == 0 else math.inf)
    check.mismatched, check.total = bad, total
    check.ok = bad == 0
    if not check.ok:
        check.message = (
            f"{bad} of {total} elements outside atol={atol:g} + rtol={rtol:g}*|ref| "
            f"(max |error| {max_abs:.3g}, relative error {check.rel_error:.3g})"
        )
    return check


def _poisoned_launch(
    spec: protocol.KernelSpec, inputs: tuple, variant: dict[str, Any], sync: Callable
) -> Any:
    """Run the kernel twice: once to compile/autotune, once into an output poisoned with NaN.

    With `out=` in launch's signature the poisoned buffer is passed in; otherwise the first output
    is filled with NaN and freed, so the caching allocator hands the same memory to the second call.
    """
    import torch

    first = protocol.call(spec.launch, *inputs, **variant)
    sync()
    single = isinstance(first, torch.Tensor) and first.is_floating_point()
    if single and protocol.takes_out(spec.launch):
        poison = torch.full_like(first, float("nan"))
        del first
        out = protocol.call(spec.launch, *inputs, out=poison, **variant)
    else:
        for t in _tensors(first):
            if isinstance(t, torch.Tensor) and t.is_floating_point():
                t.fill_(float("nan"))
        del first
        out = protocol.call(spec.launch, *inputs, **variant)
    sync()
    return out


def _rates(work_flops: int | None, work_bytes: int | None, ms: float) -> tuple[float | None, float | None]:
    if ms <= 0:
        return None, None
    gbps = work_bytes / (ms * 1e-3) / 1e9 if work_bytes else None
    tflops = work_flops / (ms * 1e-3) / 1e12 if work_flops else None
    return gbps, tflops


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) < 2000 else text[:2000] + " ..."


def _fatal(exc: BaseException) -> bool:
    """Whether the CUDA context is gone (then nothing else can run in this process)."""
    text = str(exc)
    return any(
        s in text
        for s in (
            "illegal memory access",
            "unspecified launch failure",
            "illegal instruction",
            "misaligned address",
            "device-side assert triggered",  # not "device-side assertions": every CUDA error's hint
            "CUDA_ERROR_ILLEGAL",
            "an illegal",
            "hipErrorIllegal",
        )
    )


def _work(fn: Callable | None, size: Any, variant: dict[str, Any]) -> int | None:
    if fn is None:
        return None
    try:
        return int(protocol.call(fn, size, **variant))
    except Exception:  # noqa: BLE001 - a broken count only loses the derived rates
        return None


class _Sweeper:
    """One kernel file's sweeps, with the settings of one request."""

    def __init__(
        self,
        spec: protocol.KernelSpec,
        *,
        device: str,
        check_only: bool,
        vs: list[str],
        methods: list[str],
        rep_ms: int,
        warmup_ms: int,
        progress: Progress,
        counter: list[int],
        total: int,
        dynamic_compile: bool = False,
        rounds: int = DEFAULT_ROUNDS,
    ):
        self.spec, self.device, self.check_only = spec, device, check_only
        self.rounds = max(int(rounds), 1)
        self.vs, self.methods, self.rep_ms, self.warmup_ms = vs, methods, rep_ms, warmup_ms
        self.progress, self.counter, self.total = progress, counter, total
        self.dynamic_compile = dynamic_compile
        self._compiled: dict[str, Callable] = {}

    def _sync(self) -> None:
        import torch

        if self.device == "cuda":
            torch.cuda.synchronize()

    def _say(self, message: str) -> None:
        self.progress(self.counter[0], self.total, message)

    def _baseline_fn(self, variant_name: str, variant: dict[str, Any], impl: str) -> Callable:
        base = self.spec.baseline or self.spec.reference
        kwargs = protocol.accepted_kwargs(base, variant)
        if impl == "eager":
            return lambda *a: base(*a, **kwargs)
        if variant_name not in self._compiled:
            import torch

            def bound(*a):
                return base(*a, **kwargs)

            if self.dynamic_compile:
                self._compiled[variant_name] = torch.compile(bound)
            else:
                # One graph specialised to each shape (what a fixed-shape deployment compiles): the
                # default would switch to dynamic shapes at the second size, whose kernels can be
                # slower (a looped instead of a one-pass reduction).
                cfg = torch._dynamo.config
                name = "recompile_limit" if hasattr(cfg, "recompile_limit") else "cache_size_limit"
                setattr(cfg, name, max(getattr(cfg, name), 256))
                self._compiled[variant_name] = torch.compile(bound, dynamic=False)
        return self._compiled[variant_name]

    def _input_sets(self, inputs: tuple, bytes_moved: int | None) -> list[tuple]:
        """`inputs` and the copies the graph timer cycles through (`rotation_count`)."""
        if self.device != "cuda":
            return [inputs]
        import torch

        footprint = max(nbytes(inputs), bytes_moved or 0)
        l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", None)
        return [inputs] + [clone(inputs) for _ in range(rotation_count(footprint, l2) - 1)]

    def point(self, variant_name: str, variant: dict[str, Any], size: Any) -> Point:
        spec = self.spec
        label = " ".join(x for x in (spec.name, variant_name, size_label(size)) if x)
        point = Point(
            size=size,
            flops=_work(spec.flops, size, variant),
            bytes_moved=_work(spec.bytes_moved, size, variant),
        )
        tol = spec.tolerance_for(variant_name)
        try:
            self._say(f"{label}: inputs")
            inputs = tuple(protocol.call(spec.make_inputs, size, self.device, **variant))
            self._say(f"{label}: reference")
            ref = protocol.call(spec.reference, *inputs, **variant)
            self._sync()
        except Exception as exc:  # noqa: BLE001
            if _fatal(exc):
                raise DeviceLost(_short(exc)) from exc
            point.errors["inputs"] = _short(exc)
            return point

        runnable: dict[str, Callable[[], Any]] = {}
        makers: dict[str, Callable[[tuple], Callable[[], Any]]] = {}  # the same call on other inputs
        impls = ["triton"] + [i for i in self.vs if i in ("eager", "compile")]
        for impl in impls:
            self._say(f"{label}: checking {impl}")
            try:
                if impl == "triton":
                    out = _poisoned_launch(spec, inputs, variant, self._sync)
                    runnable[impl] = protocol.bind(spec.launch, *inputs, **variant)
                    makers[impl] = lambda ins: protocol.bind(spec.launch, *ins, **variant)
                else:
                    fn = self._baseline_fn(variant_name, variant, impl)
                    out = fn(*inputs)
                    self._sync()
                    runnable[impl] = lambda fn=fn: fn(*inputs)
                    makers[impl] = lambda ins, fn=fn: (lambda: fn(*ins))
                check = compare(impl, out, ref, **tol)
                del out
            except Exception as exc:  # noqa: BLE001
                if _fatal(exc):
                    raise DeviceLost(_short(exc)) from exc
                check = Check(impl=impl, ok=False, message=_short(exc), **tol)
            point.checks.append(check)
            if not check.ok:
                runnable.pop(impl, None)
                point.errors[impl] = "failed its check: " + check.message
        del ref

        if not self.check_only and runnable:
            for method in self.methods:
                rounds: dict[str, list[tuple[float, float, float]]] = {impl: [] for impl in runnable}
                timers: dict[str, str] = {}
                for r in range(self.rounds):
                    # Fresh copies each round, shared by the implementations within it: a matmul's
                    # time moves by up to 7 % with where its inputs lie and the clock of the moment;
                    # the median round keeps the typical one.
                    sets = self._input_sets(inputs, point.bytes_moved) if method == "do_bench" else [inputs]
                    for impl, fn in runnable.items():
                        if impl not in rounds:
                            continue  # failed in an earlier round
                        self._say(
                            f"{label}: timing {impl}" + (" (CUDA graph)" if method == "cudagraph" else "")
                            + (f", round {r + 1}/{self.rounds}" if self.rounds > 1 else "")
                        )
                        try:
                            if method == "do_bench" and timers.get(impl, "graph") == "graph":
                                try:
                                    calls = [fn] + [makers[impl](s) for s in sets[1:]]
                                    rounds[impl].append(
                                        tuple(bench_graph_time(calls, self.rep_ms, QUANTILES, self.warmup_ms))
                                    )
                                    timers[impl] = "graph"
                                    continue
                                except Exception as exc:  # noqa: BLE001 - not capturable: time by events
                                    if _fatal(exc):
                                        raise
                                    timers[impl] = "events"
                                    point.errors.setdefault(
                                        f"{impl}/graph", "timed by events, not capturable: " + _short(exc)
                                    )
                                    self._sync()
                            rounds[impl].append(time_fn(fn, method, self.rep_ms, self.warmup_ms))
                        except Exception as exc:  # noqa: BLE001
                            if _fatal(exc):
                                raise DeviceLost(_short(exc)) from exc
                            key = impl if method == "do_bench" else f"{impl}/{method}"
                            point.errors[key] = "timing failed: " + _short(exc)
                            del rounds[impl]
                    del sets
                for impl, got in rounds.items():
                    median, p20, p80 = sorted(got)[(len(got) - 1) // 2]  # the round with the median median
                    gbps, tflops = _rates(point.flops, point.bytes_moved, median)
                    point.timings.append(
                        Timing(
                            impl=impl,
                            method=method,
                            median_ms=median,
                            p20_ms=p20,
                            p80_ms=p80,
                            gbps=gbps,
                            tflops=tflops,
                            timer=timers.get(impl) if method == "do_bench" else None,
                        )
                    )
        return point


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def plan(
    spec: protocol.KernelSpec, sizes: list[Any] | None, variants: list[str] | None, check_only: bool,
    largest_only: bool = False,
) -> list[tuple[str, dict[str, Any], list[Any], str]]:
    """[(variant name, kwargs, sizes, why skipped or "")] a request will run for one file;
    `largest_only`: the first variant at its largest size (one point, e.g. to time a config)."""
    chosen = spec.select_variants(variants)
    use = list(sizes) if sizes else (spec.test_sizes if check_only else spec.sizes)
    if largest_only:
        chosen, use = chosen[:1], use[-1:]
    skip = spec.interpreter_skip if _interpreting() else {}
    return [(name, kwargs, [] if name in skip else use, skip.get(name, "")) for name, kwargs in chosen]


def _load(target: str, settings: dict[str, Any], sizes: list[Any] | None, variants: list[str] | None,
          check_only: bool, largest_only: bool) -> tuple[str, protocol.KernelSpec | None, BenchResult]:
    """A target's spec (None when it cannot be loaded: the result says why) and its result to fill."""
    result = BenchResult(kernel=target, date=_now(), settings=dict(settings))
    try:
        spec = protocol.load_spec(target, settings["autotune_config"])
        result.kernel, result.title, result.source = spec.name, spec.title, protocol.display_source(spec.path)
        result.size_names = list(spec.size_names)
        result.settings["baseline"] = "baseline" if spec.baseline else "reference"
        plan(spec, sizes, variants, check_only, largest_only)  # validates the variant names early
    except protocol.ProtocolError as exc:
        spec, result.error = None, BenchError("protocol", str(exc))
    except BaseException as exc:  # noqa: BLE001 - the user's file may raise anything on import
        spec, result.error = None, BenchError("load", traceback.format_exc(limit=-3) or _short(exc))
    return target, spec, result


def _sweep(spec: protocol.KernelSpec, sweeper: "_Sweeper", result: BenchResult, planned: list[Any],
           has_gpu: bool) -> None:
    """Every planned point of one target, into `result`'s sweeps, reporting progress as it goes."""
    import torch

    for name, kwargs, use, skipped in planned:
        sweep = Sweep(variant=name, params={k: str(v) for k, v in kwargs.items()}, skipped=skipped)
        result.sweeps.append(sweep)
        for size in use:
            sweep.points.append(sweeper.point(name, kwargs, size))
            if has_gpu:
                torch.cuda.empty_cache()  # the point's inputs are gone: keep the pool small
            sweeper.counter[0] += 1
            sweeper.progress(sweeper.counter[0], sweeper.total,
                             " ".join(x for x in (spec.name, name, size_label(size)) if x))


def run(targets: list[str], settings: BenchSettings | None = None, *, progress: Progress | None = None,
        on_result: Callable[[BenchResult], None] | None = None, **fields: Any) -> list[BenchResult]:
    """Benchmark each target (a bundled kernel's name or a file) in this process, as `settings`
    (or `BenchSettings(**fields)`) says; see the module doc. `rounds`: how many interleaved
    do_bench rounds per implementation (the median round is kept).

    Timing needs a GPU: without one, unless `check_only`, every result carries error kind
    "no_gpu". With `check_only` nothing is timed; without a GPU the check runs on the CPU (set
    TRITON_INTERPRET=1 before Triton is first imported for the kernels to run there).
    """
    s = settings or BenchSettings(**fields)
    sizes, variants, vs, cudagraph, check_only = s.sizes, s.variants, s.vs, s.cudagraph, s.check_only
    rep_ms, warmup_ms, rounds, largest_only = s.rep_ms, s.warmup_ms, s.rounds, s.largest_only
    dynamic_compile, autotune_config = s.dynamic_compile, s.autotune_config
    import torch

    progress = progress or (lambda done, total, message: None)
    has_gpu = torch.cuda.is_available()
    device = "cuda" if has_gpu else "cpu"
    settings = dict(
        rep_ms=rep_ms,
        warmup_ms=warmup_ms,
        rounds=max(int(rounds), 1),
        vs=list(vs),
        cudagraph=cudagraph,
        check_only=check_only,
        quantiles=QUANTILES,
        l2_flush=True,
        timer="bench_graph_time: CUDA-graph replays of calls cycling through input copies over 3x the L2 "
        "cache; calls that cannot be captured: bench_gpu_time (do_bench's events and L2 flush)",
        interpreter=_interpreting(),
        dynamic_compile=dynamic_compile,
        autotune_config=autotune_config,
    )

    loaded = [_load(target, settings, sizes, variants, check_only, largest_only) for target in targets]

    if not has_gpu and not check_only:
        out = []
        for _, _, result in loaded:
            if result.error is None:
                result.error = BenchError(
                    "no_gpu", "no GPU found (torch.cuda.is_available() is False): nothing can be timed here"
                )
            out.append(result)
            if on_result:
                on_result(result)
        return out

    info, uuid = device_info()
    ceilings = None
    if has_gpu and not check_only and any(spec for _, spec, _ in loaded):
        from .ceilings import device_ceilings

        progress(0, 0, f"measuring the ceilings of {info.name} (once per device)")
        ceilings = device_ceilings(info, uuid)

    methods = ["do_bench"] + (["cudagraph"] if cudagraph else [])
    total = sum(
        len(s)
        for _, spec, _ in loaded
        if spec
        for _, _, s, _ in plan(spec, sizes, variants, check_only, largest_only)
    )
    counter = [0]
    results: list[BenchResult] = []
    lost: str | None = None
    for target, spec, result in loaded:
        result.device, result.ceilings = info, ceilings
        if spec is None:
            pass
        elif lost:
            result.error = BenchError("crashed", f"not run: the GPU context was lost earlier ({lost})")
        else:
            result.date = _now()
            sweeper = _Sweeper(spec, device=device, check_only=check_only, vs=list(vs), methods=methods,
                               rep_ms=rep_ms, warmup_ms=warmup_ms, progress=progress, counter=counter, total=total,
                               dynamic_compile=dynamic_compile, rounds=rounds)
            try:
                _sweep(spec, sweeper, result, plan(spec, sizes, variants, check_only, largest_only), has_gpu)
            except DeviceLost as exc:
                lost = str(exc)
                result.error = BenchError("crashed", f"the GPU context was lost: {exc}")
            except Exception as exc:  # noqa: BLE001 - one kernel's failure must not lose the others
                result.error = BenchError("internal", traceback.format_exc(limit=-4) or _short(exc))
        results.append(result)
        if on_result:
            on_result(result)
    return results
