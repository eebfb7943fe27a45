"""Launch-shape sweep for the bundled softmax and layer norm at the row lengths where they trailed
PyTorch on the H200 (torch.compile, mostly), in one device call with its own deadline.

    PYTHONUNBUFFERED=1 python3 benchmarks/tune_h200_rows.py --out $OUT [--deadline 150] [--confirm]

Kernels compared, all in one process, on the gallery's timer (`inspector.bench.timing.
bench_graph_time`: CUDA-graph replays cycling through input copies over 3x the L2 cache, so
these figures read like assets/bench's):
- `current`: the bundled kernels (imported from kernels/) with ROWS=1 and the launch logic they had
  before this sweep (commit bfe5aab; `sm_old_params`, `ln_old_params` below): persistent,
  software-pipelined grid sized by the occupancy calculator (softmax's 32 KB rows: one program per
  row, no pipelining). The kernel bodies were copied here until the sweep's 2-D form was merged
  into kernels/ (ROWS > 1); the one-row branch is the old body unchanged;
- candidates of the same kernels with a ROWS x BLOCK tile (several rows per program, as inductor
  does for short rows): `flat` = one program per ROWS rows,
  no pipelining (NUM_STAGES 1), the hardware scheduling the programs; `pers` = the persistent,
  pipelined grid over blocks of ROWS rows; each with several num_warps;
- `eager` (each file's `baseline`) and `compile` (torch.compile(baseline, dynamic=False), one
  compiled function per kernel and dtype, as the gallery's runner compiles it).
Every candidate's output (written into a NaN-poisoned buffer) is checked against the file's
`reference` with its TOLERANCE first; what fails is not timed.

Per (kernel, dtype, size): a one-round screen of every candidate (rep 15 ms), then the best three
with `current`, `eager` and `compile` in 3 interleaved rounds (rep 30 ms, fresh input copies per
round; the median round kept). Compilation is done up front in parallel: worker processes compile
every Triton candidate into Triton's on-disk cache (`--compile-worker`) and run torch.compile once
per shape (`--inductor-worker`, filling inductor's FX-graph and autotune caches), so the timing
process mostly loads binaries. Nothing new is started after `--deadline` seconds from the start.

`--confirm`: time the kernel files as they are now (`bundled`) against `current`, eager and
compile (all sizes; compile at the targeted sizes and the guards), next to the alternatives of
`confirm_specs`.

Prints a table and writes OUT/tune_h200_rows.json. Run on 2026-11-23 (H200, Triton 3.6.0, torch
2.11.0+cu130): the sweep (76 s of device time, 226 launches compiled in 22 s by 12 workers; round-
to-round spread under 0.5 %), then `--confirm --deadline 100 --precompile-limit 40` (60 s) with the
files then bundled, whose layer norm had `evict_last` hints on weight and bias: those measured from
0.3 % faster to 0.7 % slower and were taken out afterwards, leaving the launches `alt:no hints`
measured (the SASS of seven committed launch shapes was checked identical to the measured ones,
offline with Triton 3.6.0 for sm_90). softmax fp32 512 went from (2 rows, 2 warps) to
`alt:flat R2 w1` after that run: 17.17 against 17.25 us. The resulting figures are in the
docstrings of kernels/softmax.py and kernels/layer_norm.py.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

T0 = time.time()
REPO = Path(__file__).resolve().parents[1]

import torch
import triton

M_ROWS = 16384
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def log(msg: str) -> None:
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


# ---- the kernels before this sweep (bfe5aab), verbatim ------------------------------------------
def sm_old_params(n_cols: int, element_size: int) -> tuple[int, int, int]:
    block = triton.next_power_of_2(n_cols)
    row_bytes = block * element_size
    num_warps = min(max(row_bytes // 1024, 2), 16)
    num_stages = min(max(65536 // row_bytes + 1, 2), 4)
    if row_bytes == 32768:
        num_stages = 1
    return block, num_warps, num_stages


def ln_old_params(n_cols: int, element_size: int) -> tuple[int, int, int]:
    block_n = triton.next_power_of_2(n_cols)
    row_bytes = block_n * element_size
    num_warps = min(max(block_n // (16 * 32), 1), 16)
    num_stages = min(max(65536 // row_bytes + 1, 3), 4)
    return block_n, num_warps, num_stages


# The bundled kernels themselves (imported, never copied): ROWS=1 is the one-row body the old launch
# logic (`sm_old_params`, `ln_old_params`) drove; ROWS > 1 the ROWS x BLOCK tile the candidates try.
from kernels.layer_norm import layer_norm_kernel  # noqa: E402
from kernels.softmax import softmax_kernel  # noqa: E402

KERNELS = {"sm_old": softmax_kernel, "ln_old": layer_norm_kernel, "sm2d": softmax_kernel, "ln2d": layer_norm_kernel}


def kernel_args(kid: str, ts: tuple, M: int, N: int) -> tuple:
    """Positional arguments of kernel `kid` for tensors ts = (x, out) or (x, w, b, out)."""
    if kid.startswith("sm"):
        x, out = ts
        return (out, x, N, N, M, N)
    x, w, b, out = ts
    return (x, w, b, out, N, N, M, N, 1e-5)


def consts(kid: str, block: int, stages: int, rows: int) -> dict:
    c = {"BLOCK" if kid.startswith("sm") else "BLOCK_N": block, "NUM_STAGES": stages}
    if kid.endswith("2d"):
        c["ROWS"] = rows
    return c


# ---- what each (kernel, dtype, size) tries -------------------------------------------------------
TARGETED = [  # the sizes where the bundled kernels trailed PyTorch, worst first
    ("softmax", "bf16", 256), ("layer_norm", "fp32", 4096), ("softmax", "fp32", 256),
    ("softmax", "fp32", 1024), ("softmax", "fp32", 512), ("layer_norm", "fp32", 2048),
    ("layer_norm", "fp32", 8192), ("softmax", "bf16", 1024), ("layer_norm", "fp32", 1024),
    ("softmax", "fp32", 2048), ("layer_norm", "fp32", 512), ("layer_norm", "bf16", 1024),
    ("softmax", "bf16", 512),
]
GUARDS = [("softmax", "bf16", 16384), ("layer_norm", "fp32", 16384), ("layer_norm", "bf16", 16384)]
OTHERS = [
    ("softmax", "bf16", 2048), ("layer_norm", "bf16", 512), ("layer_norm", "bf16", 2048),
    ("softmax", "fp32", 4096), ("softmax", "bf16", 4096), ("layer_norm", "bf16", 4096),
    ("softmax", "fp32", 8192), ("softmax", "bf16", 8192), ("layer_norm", "bf16", 8192),
    ("softmax", "fp32", 16384),
]


def old_config(kernel: str, dtype: str, N: int) -> tuple[str, int, int, int]:
    """(mode, rows, warps, stages) of the kernel before this sweep."""
    esz = torch.empty((), dtype=DTYPES[dtype]).element_size()
    _, w, s = (sm_old_params if kernel == "softmax" else ln_old_params)(N, esz)
    mode = "flat" if (kernel == "softmax" and s == 1) else "pers"
    return mode, 1, w, s


def candidates(kernel: str, dtype: str, N: int, full: bool) -> list[tuple[str, int, int, int]]:
    """(mode, rows, warps, stages) of the 2-D kernel to try; the first is the old launch shape."""
    esz = torch.empty((), dtype=DTYPES[dtype]).element_size()
    E = triton.next_power_of_2(N)
    old = old_config(kernel, dtype, N)
    out = [old]

    def add(c):
        if c not in out:
            out.append(c)

    def clip(w):
        return int(min(max(w, 1), 16))

    def tile_ok(R):  # several rows per program only while the tile stays small
        return R == 1 or (R * E * esz <= 8192 if kernel == "softmax" else R * E <= 4096)

    if not full:
        for ept in (8, 16):
            add(("flat", 1, clip(E // (32 * ept)), 1))
        return out
    for R in (1, 2, 4, 8, 16):
        if not tile_ok(R):
            continue
        epts = (4, 8, 16, 32) if (R == 1 and E >= 4096) else (4, 8, 16)
        for ept in epts:
            add(("flat", R, clip(R * E // (32 * ept)), 1))
    for R in (2, 4, 8):
        if tile_ok(R) and R * E * esz >= 1024:
            add(("pers", R, clip(R * E // 256), 3))
    _, _, w0, s0 = old
    if old[0] == "pers":
        for w in (w0 // 2, w0 * 2):
            if 1 <= w <= 16:
                add(("pers", 1, w, s0))
        add(("pers", 1, w0, 2 if s0 > 2 else 3))
    return out


def cname(c) -> str:
    mode, R, w, s = c
    return f"{mode} R{R} w{w}" + (f" s{s}" if mode == "pers" else "")


# ---- compile workers -----------------------------------------------------------------------------
def compile_jobs(plan: list, confirm: bool) -> list:
    """(kernel, dtype, N, spec) for each launch the timing process will make (see `impl_of`)."""
    jobs = []
    for kernel, dtype, N, full in plan:
        if confirm:
            specs = list(confirm_specs(kernel, dtype, N).values())
        else:
            specs = ["current"] + [list(c) for c in candidates(kernel, dtype, N, full)]
        jobs += [(kernel, dtype, N, spec) for spec in specs]
    return jobs


# Launches tried next to the bundled files in --confirm, beyond `current` and `bundled`; each is a
# binary the files make with another entry in their MEASURED_SHAPES table (ROWS > 1: the tile body,
# the same source as sm2d; ROWS 1 in softmax: the 1-D body, the same source as before).
CONFIRM_EXTRA = {
    ("softmax", "fp32", 512): {"alt:flat R2 w1": ["2d", "flat", 2, 1, 1], "alt:flat R4 w2": ["2d", "flat", 4, 2, 1]},
    ("softmax", "fp32", 1024): {"alt:1d flat R1 w1": ["old", "flat", 1, 1, 1],
                                "alt:flat R2 w2": ["2d", "flat", 2, 2, 1]},
    ("layer_norm", "bf16", 16384): {"alt:bundled w8 s3": ["bundled", 8, 3], "alt:bundled w16 s2": ["bundled", 16, 2]},
}


def confirm_specs(kernel: str, dtype: str, N: int) -> dict:
    """name -> spec for --confirm: the old and the bundled launch, the bundled launch shape run by
    the sweep's kernels (the 2-D tile body sm2d / ln2d at one row per program; layer norm without
    the evict_last hints the bundled file had when this ran, the same as `bundled` now), and
    CONFIRM_EXTRA."""
    specs = {"current": "current", "bundled": "bundled"}
    esz = torch.empty((), dtype=DTYPES[dtype]).element_size()
    _, R, w, s = module_of(kernel).launch_shape(N, esz)
    mode = "flat" if s == 1 else "pers"
    changed = (mode, R, w, s) != old_config(kernel, dtype, N)
    if kernel == "softmax":
        if R == 1:
            specs["alt:2d body"] = ["2d", mode, R, w, s]
    else:
        if changed or R > 1:  # else `current` is that launch
            specs["alt:no hints"] = ["old" if R == 1 else "2d", mode, R, w, s]
        if R == 1 and changed:
            specs["alt:2d body, no hints"] = ["2d", mode, R, w, s]
    specs.update(CONFIRM_EXTRA.get((kernel, dtype, N), {}))
    return specs


def impl_of(kernel: str, dtype: str, N: int, spec):
    """spec: "current" (the old kernel and launch), "bundled" (the kernel file as it is now),
    ["bundled", num_warps, num_stages] (its launch with overrides), ["old" | "2d", mode, rows, warps,
    stages] (the old 1-D kernel or the 2-D candidate with that launch shape), or (mode, rows, warps,
    stages) (the 2-D candidate)."""
    pre = "sm" if kernel == "softmax" else "ln"
    if spec == "current":
        return launcher(kernel, pre + "_old", *old_config(kernel, dtype, N))
    if spec == "bundled":
        return module_of(kernel).launch
    if spec[0] == "bundled":
        launch, w, st = module_of(kernel).launch, spec[1], spec[2]
        return lambda *inputs, out=None: launch(*inputs, out=out, num_warps=w, num_stages=st)
    if spec[0] in ("old", "2d"):
        return launcher(kernel, pre + ("_old" if spec[0] == "old" else "2d"), *spec[1:])
    return launcher(kernel, pre + "2d", *spec)


def compile_worker(jobs: list) -> None:
    """Run each job's launch once on inputs of its size: every binary lands in Triton's disk cache."""
    inputs, shape = None, None
    for kernel, dtype, N, spec in jobs:
        try:
            if shape != (kernel, dtype, N):
                inputs, shape = None, None
                torch.cuda.empty_cache()
                inputs = module_of(kernel).make_inputs((M_ROWS, N), "cuda", dtype=DTYPES[dtype])
                shape = (kernel, dtype, N)
            impl_of(kernel, dtype, N, spec)(*inputs)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - the timing process reports it
            print(f"compile {kernel} {dtype} {N} {spec}: {type(e).__name__}: {str(e)[:200]}", flush=True)


def module_of(kernel: str):
    from kernels import layer_norm, softmax

    return softmax if kernel == "softmax" else layer_norm


def compiled_baseline(kernel: str, dtype: str, cache: dict):
    key = (kernel, dtype)
    if key not in cache:
        base = module_of(kernel).baseline

        def bound(*a):
            return base(*a)

        cfg = torch._dynamo.config
        name = "recompile_limit" if hasattr(cfg, "recompile_limit") else "cache_size_limit"
        setattr(cfg, name, max(getattr(cfg, name), 256))
        cache[key] = torch.compile(bound, dynamic=False)
    return cache[key]


def inductor_worker(shapes: list) -> None:
    cache: dict = {}
    for kernel, dtype, N in shapes:
        try:
            mod = module_of(kernel)
            inputs = mod.make_inputs((M_ROWS, N), "cuda", dtype=DTYPES[dtype])
            compiled_baseline(kernel, dtype, cache)(*inputs)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001
            print(f"inductor {kernel} {dtype} {N}: {type(e).__name__}: {str(e)[:200]}", flush=True)


def precompile(plan: list, confirm: bool, compile_shapes: list, n_workers: int, n_inductor: int, limit_s: float,
               tmp: Path) -> None:
    jobs = compile_jobs(plan, confirm)
    procs = []
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1", PYTHONUNBUFFERED="1")
    for i in range(n_workers):
        part = jobs[len(jobs) * i // n_workers: len(jobs) * (i + 1) // n_workers]  # sizes kept together
        if part:
            p = tmp / f"jobs_{i}.json"
            p.write_text(json.dumps(part))
            procs.append(subprocess.Popen([sys.executable, __file__, "--compile-worker", str(p)], env=env))
    for i in range(n_inductor):
        part = compile_shapes[i::n_inductor]
        if part:
            p = tmp / f"shapes_{i}.json"
            p.write_text(json.dumps(part))
            procs.append(subprocess.Popen([sys.executable, __file__, "--inductor-worker", str(p)], env=env))
    log(f"precompiling: {len(jobs)} Triton compilations in {n_workers} workers, "
        f"{len(compile_shapes)} torch.compile shapes in {n_inductor}")
    end = time.time() + limit_s
    for p in procs:
        try:
            p.wait(timeout=max(end - time.time(), 0.1))
        except subprocess.TimeoutExpired:
            p.kill()
            log("a precompile worker ran past its limit and was stopped")
    log("precompiled")


# ---- launchers -------------------------------------------------------------------------------------
_RESIDENT: dict = {}


def resident(kid: str, args: tuple, cs: dict, warps: int, dtype) -> int:
    key = (kid, dtype, tuple(sorted(cs.items())), warps)
    if key not in _RESIDENT:
        from inspector.occupancy import triton_occupancy

        k = KERNELS[kid].warmup(*args, grid=(1,), num_warps=warps, **cs)
        k._init_handles()
        target = triton.runtime.driver.active.get_current_target()
        per_sm = triton_occupancy(target, warps, k.n_regs, k.metadata.shared).blocks_per_sm
        _RESIDENT[key] = max(per_sm, 1) * torch.cuda.get_device_properties(0).multi_processor_count
    return _RESIDENT[key]


def launcher(kernel: str, kid: str, mode: str, R: int, warps: int, stages: int):
    def launch(*inputs, out=None):
        x = inputs[0]
        M, N = x.shape
        out = torch.empty_like(x) if out is None else out
        ts = (x, out) if kernel == "softmax" else (*inputs, out)
        args = kernel_args(kid, ts, M, N)
        cs = consts(kid, triton.next_power_of_2(N), stages, R)
        blocks = triton.cdiv(M, R)
        grid = blocks if mode == "flat" else min(resident(kid, args, cs, warps, x.dtype), blocks)
        KERNELS[kid][(grid,)](*args, num_warps=warps, **cs)
        return out

    return launch


# ---- timing ----------------------------------------------------------------------------------------
def input_sets(inputs: tuple, bytes_moved: int) -> list:
    from inspector.bench.timing import clone as _clone, nbytes as _nbytes, rotation_count

    l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", None)
    footprint = max(_nbytes(inputs), bytes_moved)
    return [inputs] + [_clone(inputs) for _ in range(rotation_count(footprint, l2) - 1)]


def graph_ms(fn, sets: list, rep_ms: int, warmup_ms: int) -> float:
    from inspector.bench.timing import bench_graph_time

    calls = [(lambda s=s: fn(*s)) for s in sets]
    return bench_graph_time(calls, rep_ms, [0.5, 0.2, 0.8], warmup_ms)[0]


def check(fn, inputs, ref, tol, ours: bool):
    from inspector.bench.runner import compare

    if ours:
        poison = torch.full_like(ref, float("nan"))
        out = fn(*inputs, out=poison)
    else:
        out = fn(*inputs)
    torch.cuda.synchronize()
    return compare("x", out, ref, **tol)


def copy_ceiling() -> float:
    from triton.testing import do_bench

    n = 2**32  # the gallery's best copy size (4 GiB each way)
    src = torch.empty(n // 4, device="cuda", dtype=torch.float32).normal_()
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=50, rep=150, quantiles=[0.5])
    return 2 * n / ((ms[0] if isinstance(ms, (list, tuple)) else ms) * 1e-3) / 1e9


def run_shape(kernel, dtype, N, impls: dict, screen: bool, rounds: int, deadline: float, rec: dict) -> None:
    """impls: name -> (fn, ours). Screens candidates named 'cand:*' (if screen), then times the best
    three with the rest in `rounds` interleaved rounds."""
    mod = module_of(kernel)
    dt = DTYPES[dtype]
    tol = dict(getattr(mod, "VARIANT_TOLERANCE", {}).get(dtype, mod.TOLERANCE))
    inputs = tuple(mod.make_inputs((M_ROWS, N), "cuda", dtype=dt))
    ref = mod.reference(*inputs)
    bytes_moved = mod.bytes_moved((M_ROWS, N), dtype=dt)
    rec["bytes"] = bytes_moved
    ok = {}
    for name, (fn, ours) in impls.items():
        try:
            c = check(fn, inputs, ref, tol, ours)
            if c.ok:
                ok[name] = fn
            else:
                rec.setdefault("failed", {})[name] = c.message
        except Exception as e:  # noqa: BLE001
            rec.setdefault("failed", {})[name] = f"{type(e).__name__}: {str(e)[:300]}"
    del ref
    if rec.get("failed"):
        log(f"  failed: {rec['failed']}")
    cands = [n for n in ok if n.startswith("cand:")]
    fixed = [n for n in ok if not n.startswith("cand:")]
    if screen and len(cands) > 3:
        sets = input_sets(inputs, bytes_moved)
        scr = {}
        for n in cands:
            if time.time() > deadline:
                break
            try:
                scr[n] = graph_ms(ok[n], sets, 15, 10) * 1e3
            except Exception as e:  # noqa: BLE001
                rec.setdefault("failed", {})[n] = f"timing: {type(e).__name__}: {str(e)[:200]}"
        rec["screen_us"] = scr
        cands = sorted(scr, key=scr.get)[:3]
        del sets
    times = {n: [] for n in fixed + cands}
    for r in range(rounds):
        if time.time() > deadline:
            break
        sets = input_sets(inputs, bytes_moved)
        for n, got in times.items():
            if time.time() > deadline:
                break
            try:
                got.append(graph_ms(ok[n], sets, 30, 15) * 1e3)
            except Exception as e:  # noqa: BLE001
                rec.setdefault("failed", {})[n] = f"timing: {type(e).__name__}: {str(e)[:200]}"
        del sets
    rec["rounds_us"] = {n: v for n, v in times.items() if v}
    rec["us"] = {n: statistics.median(v) for n, v in times.items() if v}
    torch.cuda.empty_cache()


def summarize(kernel, dtype, N, rec, ceiling) -> str:
    us = rec.get("us", {})
    if not us:
        return f"{kernel:10} {dtype} {N:6}: no timings"
    cands = {n: v for n, v in us.items() if n.startswith("cand:")}
    best_c = min(cands, key=cands.get) if cands else None
    py = min([us[n] for n in ("eager", "compile") if n in us] or [math.nan])
    cur = us.get("current", math.nan)
    new = us.get("bundled", cands.get(best_c, math.nan) if best_c else math.nan)
    newname = "bundled" if "bundled" in us else best_c
    gbps = math.nan if math.isnan(new) else rec["bytes"] / (new * 1e-6) / 1e9
    return (f"{kernel:10} {dtype} {N:6}: current {cur:8.2f}  new {new:8.2f} ({newname})  eager "
            f"{us.get('eager', math.nan):8.2f}  compile {us.get('compile', math.nan):8.2f}  "
            f"py/cur {py / cur:5.3f}  py/new {py / new:5.3f}  new/cur {cur / new:5.3f}  "
            f"{gbps:6.0f} GB/s ({100 * gbps / ceiling:4.1f} % of copy)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--deadline", type=float, default=150.0)
    ap.add_argument("--precompile-limit", type=float, default=60.0)
    ap.add_argument("--confirm", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-compile", action="store_true", help="leave torch.compile out")
    ap.add_argument("--compile-worker")
    ap.add_argument("--inductor-worker")
    a = ap.parse_args()
    if a.compile_worker:
        return compile_worker(json.loads(Path(a.compile_worker).read_text()))
    if a.inductor_worker:
        return inductor_worker([tuple(s) for s in json.loads(Path(a.inductor_worker).read_text())])

    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = Path("/tmp/tune_h200_rows")
    tmp.mkdir(exist_ok=True)
    deadline = T0 + a.deadline
    if a.confirm:
        shapes = [(k, d, n, False) for k, d, n in TARGETED + GUARDS + OTHERS]
    else:
        shapes = [(k, d, n, True) for k, d, n in TARGETED] + [(k, d, n, False) for k, d, n in GUARDS + OTHERS]
    with_compile = not a.no_compile
    compile_shapes = [(k, d, n) for k, d, n, _ in shapes if (k, d, n) not in OTHERS] if with_compile else []
    precompile(shapes, a.confirm, compile_shapes, 12, 4, a.precompile_limit, tmp)
    log(f"GPU {torch.cuda.get_device_name(0)}, Triton {triton.__version__}, torch {torch.__version__}")
    ceiling = copy_ceiling()
    torch.cuda.empty_cache()
    log(f"copy ceiling (4 GiB D2D, do_bench median): {ceiling:.0f} GB/s")
    results = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__, "torch": torch.__version__,
               "copy_gbps": ceiling, "confirm": a.confirm, "shapes": {}}
    cache: dict = {}
    lines = []
    for kernel, dtype, N, full in shapes:
        if time.time() > deadline:
            log(f"deadline: {kernel} {dtype} {N} and later not run")
            break
        mod = module_of(kernel)
        if a.confirm:
            impls = {n: (impl_of(kernel, dtype, N, sp), True) for n, sp in confirm_specs(kernel, dtype, N).items()}
        else:
            impls = {"current": (impl_of(kernel, dtype, N, "current"), True)}
            for c in candidates(kernel, dtype, N, full):
                impls["cand:" + cname(c)] = (impl_of(kernel, dtype, N, c), True)
        impls["eager"] = (mod.baseline, False)
        if with_compile and (kernel, dtype, N) not in OTHERS:
            impls["compile"] = (compiled_baseline(kernel, dtype, cache), False)
        rec: dict = {}
        t = time.time()
        try:
            run_shape(kernel, dtype, N, impls, screen=not a.confirm, rounds=a.rounds,
                      deadline=deadline, rec=rec)
        except Exception:  # noqa: BLE001
            rec["error"] = traceback.format_exc(limit=-3)
            log(rec["error"])
        results["shapes"][f"{kernel} {dtype} {M_ROWS}x{N}"] = rec
        line = summarize(kernel, dtype, N, rec, ceiling)
        lines.append(line)
        log(f"{line}  [{time.time() - t:.1f}s]")
        if a.confirm and rec.get("us"):
            log("  all: " + ", ".join(f"{n} {v:.2f}" for n, v in sorted(rec["us"].items(), key=lambda kv: kv[1])))
        if rec.get("screen_us"):
            s = rec["screen_us"]
            log("  screen: " + ", ".join(f"{n[5:]} {v:.2f}" for n, v in sorted(s.items(), key=lambda kv: kv[1])))
        (out_dir / "tune_h200_rows.json").write_text(json.dumps(results, indent=1))
    print("\n".join(["", "times in us (median of rounds); py = best of eager and compile"] + lines), flush=True)
    log("done")


if __name__ == "__main__":
    main()
