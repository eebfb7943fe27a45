"""Attention forward variants against SDPA's default backend (cuDNN) on an H200, in one device call.

    export PYTHONPATH=$PWD; PYTHONUNBUFFERED=1 python3 benchmarks/tune_h200_attention.py --out $OUT \
        [--only NAME,...|none] [--rounds 3] [--shapes 64:0:2048,...] [--deadline 150]

Candidates (VARIANTS below) are launched directly (no autotuner):
  - "launch()": kernels/attention_gluon.py's launch(), the Gluon kernel with HOPPER_CONFIG; timed
    first and again last ("launch() again") in every round;
  - H(...): the Gluon kernel (kernels/attention_gluon.py's launch_hopper) with other settings: NC consumer
    warpgroups of 64 query rows (2, or 3 = FlashAttention-3's head dim 64 shape, 192-row tiles),
    STAGES of K/V, PERSISTENT (one CTA per SM looping over the tiles), ORDER of the tiles (2: the
    longest causal key loops of all heads first), PINGPONG, SEP_O, EMU;
  - ("T",): the portable Triton kernel, kernels/attention.py's launch();
  - (measured and dropped, code removed; the figures are in docs/kernels-performance.md) re-orderings
    of the Triton kernel's key loop, `attn_variant` (MODE, BLOCK_M, BLOCK_N, num_warps, num_stages,
    maxnreg, EMU, REVERSE), in the first sweeps of 2026-11-24:
      MODE 0: the portable kernel's loop (QK^T, softmax, rescale, PV per key block; causal in two
              loops); WS=True asks Triton 3.6 for automatic warp specialization: with 4 warps its
              Hopper pass fails on the O store ('descriptor block and tensor types must match'),
              with 8 it leaves the loop as it is.
      MODE 1: "rotated": softmax of block j while P_{j-1} V_{j-1} is still in flight (Triton keeps
              a dot whose result is only carried to the next iteration asynchronous); QK^T(j+1)
              waits with wait(0). One loop; causal masks under a branch.
      MODE 2: both products in flight during the softmax, with a small synchronous dot (row sum of
              P as P @ e0) as the loop's wait(0). Compiles, but ptxas serializes every wgmma
              (C7514: the loop-carried S is copied at the back edge while its wgmma is in flight),
              so it was not timed.
    EMU k: one exponential in k on the FMA pipe (polynomial) instead of MUFU.EX2; REVERSE (causal):
    programs take the longest key loops first.
Correctness first: every candidate runs in a process of its own (a broken mbarrier protocol hangs;
stopped after --check-timeout s) on CHECK_SIZES (partial 192-row tiles, more tiles than SMs),
NaN-poisoned output against the fp32 reference (atol = rtol = 2e-3, the bundled kernel's
TOLERANCE), and again at each timed shape; only what passes is timed. Timing: inspector's graph
timer (`bench_graph_time`: CUDA-graph replays cycling through enough input copies to cover 3x the
L2), --rounds rounds per shape, each timing SDPA's default backend, launch(), the candidates,
launch() again and SDPA again in that order; a candidate's figure is the median of its rounds,
SDPA's the median of its 2 x rounds. Writes OUT/tune_h200_attention.json and prints one table per
shape; docs/kernels-performance.md has the calls.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch
import triton

# ---- the sweep --------------------------------------------------------------------------------
# name: spec. ("T",): the portable kernel as kernels/attention.py launches it off Hopper. ("H",
# {launch_hopper keyword: value}): kernels/attention.py's Gluon kernel with those settings (NC
# consumer warpgroups, STAGES, PERSISTENT grid, ORDER of the tiles, PINGPONG, EMU, ...).
# "launch()" (timed first and last in every round) is the bundled path with HOPPER_CONFIG.
# A spec with "causal_only" is skipped for the non-causal variants.
def H(**kw):
    return ("H", tuple(sorted(kw.items())))


VARIANTS = {
    64: {
        "before (NC2 st4)": H(NC=2, STAGES=4, SCHED=False),
        "NC3 st3 dyn late-Q": H(NC=3, STAGES=3, DYN=True, LATE_Q=True, causal_only=True),
    },
    128: {
        "before (NC2 st3)": H(NC=2, STAGES=3, SCHED=False),
    },
}
# "before": the settings launch() had before calls 4-9 (two consumers, one CTA per tile, causal
# longest first within each head). Measured and dropped (docs/kernels-performance.md
# has the figures): calls 1-3 (2026-11-24): the Triton kernel's loop re-orderings (attn_variant
# MODE 0/1 with EMU, maxnreg, REVERSE), the Gluon kernel with BLOCK_N 64, HALF 128, EMU 2/4 and
# (head dim 64) PINGPONG; calls 4-8 (also 2026-11-24): NC 3 with 3/5 stages, ORDER 2 (all heads' longest
# tiles first: L2 misses), persistent causal with tiles i, i + grid, ... (unbalanced), EMU 2/4
# with NC 3, PINGPONG and SEP_O=False (hd128), DYN for causal and head dim 128.
SHAPES = [(hd, causal, n) for n in (2048, 4096, 8192) for hd in (64, 128) for causal in (False, True)]
# correctness first, in the check workers: partial 192-row tiles (128, 256, 640, 1024), whole ones
# (384), and more tiles than SMs (4 x 32 x 640: a persistent CTA loops over several)
CHECK_SIZES = [(1, 2, 128), (1, 2, 256), (1, 3, 384), (2, 3, 640), (4, 32, 640), (2, 4, 1024)]


def applies(spec, causal) -> bool:
    return not (spec[0] == "H" and dict(spec[1]).get("causal_only") and not causal)


def launcher(q, k, v, causal, spec, out=None):
    """(output tensor, zero-argument launch) of one variant; spec None: the bundled launch()."""
    from kernels import attention, attention_gluon

    z, h, n, hd = q.shape
    o = torch.empty_like(q) if out is None else out
    sm_scale = 1 / math.sqrt(hd)
    if spec is None:
        return o, lambda: attention_gluon.launch(q, k, v, causal=causal, out=o)
    if spec[0] == "T":
        return o, lambda: attention.launch(q, k, v, causal=causal, sm_scale=sm_scale, out=o)
    if spec[0] == "H":
        kw = {key: val for key, val in spec[1] if key != "causal_only"}
        return o, lambda: attention_gluon.launch_hopper(q, k, v, o, causal, sm_scale, **kw)
    raise ValueError(f"unknown variant {spec!r}: the Triton loop re-orderings (attn_variant) were measured "
                     "and dropped; docs/kernels-performance.md has their figures")


def as_spec(obj):
    """A spec back from JSON (lists) to the hashable tuples VARIANTS holds."""
    if obj is None:
        return None
    if obj[0] == "H":
        return ("H", tuple(tuple(kv) for kv in obj[1]))
    return tuple(obj)


def check_worker(jobs):
    """Compile and check each (hd, causal, spec) job on CHECK_SIZES against the fp32 reference, into
    a NaN-poisoned output: one line 'CHECK {json}' each (fills Triton's on-disk cache for the timing
    process)."""
    for hd, causal, spec in jobs:
        spec = as_spec(spec)
        worst, ok, why = 0.0, True, ""
        try:
            for i, size in enumerate(CHECK_SIZES):
                g = torch.Generator(device="cuda").manual_seed(1 + i)
                q, k, v = (torch.randn(*size, hd, device="cuda", dtype=torch.float16, generator=g) for _ in range(3))
                o, fn = launcher(q, k, v, causal, spec, out=torch.full_like(q, float("nan")))
                fn()
                torch.cuda.synchronize()
                ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                                                       is_causal=causal)
                err = (o.float() - ref).abs().max().item()
                worst = float("inf") if math.isnan(err) else max(worst, err)
                if not torch.allclose(o.float(), ref, atol=2e-3, rtol=2e-3):
                    ok, why = False, f"{why} {size}: err {err:.1e}"
        except Exception as e:  # noqa: BLE001
            ok, why = False, f"{type(e).__name__}: {str(e)[:300]}"
        print("CHECK " + json.dumps({"hd": hd, "causal": causal, "spec": spec, "ok": ok, "err": worst, "why": why}),
              flush=True)


def precompile(only: set | None, timeout: float) -> set:
    """Check every job in a process of its own, all at once, stopped after `timeout` s (a wrong
    mbarrier protocol hangs rather than fails); returns the (hd, causal, spec) jobs that passed."""
    jobs = [(hd, causal, None) for hd in VARIANTS for causal in (False, True)]
    jobs += [(hd, causal, spec) for hd, vs in VARIANTS.items() for name, spec in vs.items()
             if not only or name in only for causal in (False, True) if applies(spec, causal)]
    procs = [subprocess.Popen([sys.executable, __file__, "--check-worker", json.dumps([j])], stdout=subprocess.PIPE,
                              text=True) for j in jobs]
    good = set()
    t_end = time.time() + timeout
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, t_end - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            print(f"check worker timed out (hang?): {p.args[-1][:200]}", flush=True)
        for line in out.splitlines():
            if line.startswith("CHECK "):
                r = json.loads(line[6:])
                spec = as_spec(r["spec"])
                print(f"check hd{r['hd']} causal={r['causal']} {spec or 'launch()'}: ok={r['ok']} err={r['err']:.1e}"
                      f"{r['why']}", flush=True)
                if r["ok"]:
                    good.add((r["hd"], r["causal"], spec))
            else:
                print(line, flush=True)
    return good


def graph_ms(fn_of_set, sets, rep_ms=40, warmup_ms=15) -> float:
    """inspector.bench.runner's graph timer (CUDA-graph replays cycling through the input sets;
    the median replay's time per call)."""
    from inspector.bench.timing import bench_graph_time

    return bench_graph_time([(lambda s=s: fn_of_set(s)) for s in sets], rep_ms, [0.5], warmup_ms)[0]


def smi(*args: str) -> str:
    try:
        return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30,
                              check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"nvidia-smi failed: {e}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--deadline", type=float, default=150.0,
                    help="start no new shape this many seconds after the check phase")
    ap.add_argument("--only", default="", help="comma-separated variant names (default: all; 'none': launch() only)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check-timeout", type=float, default=75.0)
    ap.add_argument("--shapes", default="", help="e.g. 64:0:2048,128:1:4096 (default: SHAPES)")
    ap.add_argument("--check-worker", default=None)
    ns = ap.parse_args()
    if ns.check_worker is not None:
        check_worker(json.loads(ns.check_worker))
        return 0
    t0 = time.time()
    from inspector.bench.timing import clone as _clone, rotation_count
    from kernels import attention_gluon as att

    only = {s for s in ns.only.split(",") if s} or None
    env = dict(smi=smi("--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw",
                       "--format=csv"), torch=torch.__version__, triton=triton.__version__,
               hopper_config={str(k): v for k, v in att.HOPPER_CONFIG.items()})
    print(json.dumps(env), flush=True)
    good = precompile(only, ns.check_timeout)
    print(f"[checked at {time.time() - t0:.0f} s]", flush=True)
    shapes = SHAPES
    if ns.shapes:
        shapes = [(int(a), bool(int(b)), int(c)) for a, b, c in (x.split(":") for x in ns.shapes.split(","))]
    t1 = time.time()
    out_dir = Path(ns.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    rows: list = []
    for hd, causal, n in shapes:
        if time.time() - t1 > ns.deadline:
            print(f"deadline: skipping hd{hd} causal={causal} N={n} and later", flush=True)
            break
        size = (4, 32, n)
        fl = att.flops(size, causal=causal, head_dim=hd)
        torch.manual_seed(0)
        q, k, v = att.make_inputs(size, "cuda", head_dim=hd)
        ref = torch.nn.functional.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
        cands = {}
        if (hd, causal, None) in good:
            cands["launch()"] = None
        for name, spec in VARIANTS[hd].items():
            if (not only or name in only) and applies(spec, causal) and (hd, causal, spec) in good:
                cands[name] = spec
        # correctness at this shape, into a NaN-poisoned output
        ok = {}
        sdpa_out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        errs = {"SDPA": (sdpa_out.float() - ref).abs().max().item()}
        for name, spec in cands.items():
            try:
                o, fn = launcher(q, k, v, causal, spec, out=torch.full_like(q, float("nan")))
                fn()
                torch.cuda.synchronize()
                errs[name] = (o.float() - ref).abs().max().item()
                if torch.allclose(o.float(), ref, atol=2e-3, rtol=2e-3):
                    ok[name] = spec
                else:
                    print(f"  {name}: WRONG at this shape (err {errs[name]:.1e})", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"  {name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
        del ref, sdpa_out
        n_sets = rotation_count(4 * q.nbytes, l2)
        sets = [(q, k, v, torch.empty_like(q))] + [_clone((q, k, v, torch.empty_like(q))) for _ in range(n_sets - 1)]

        def sdpa(s, causal=causal):
            return torch.nn.functional.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=causal)

        def ours(spec, causal=causal):
            fns = {}

            def call(s):
                key = id(s)
                if key not in fns:
                    fns[key] = launcher(s[0], s[1], s[2], causal, spec, out=s[3])[1]
                return fns[key]()
            return call

        order = ["SDPA"] + (["launch()"] if "launch()" in ok else []) + [x for x in ok if x != "launch()"]
        order += (["launch() again"] if "launch()" in ok else []) + ["SDPA again"]
        fn_of = {name: sdpa if name.startswith("SDPA") else ours(ok[name.replace(" again", "")]) for name in order}
        times = {name: [] for name in order}
        for _ in range(ns.rounds):
            for name in order:
                try:
                    times[name].append(graph_ms(fn_of[name], sets))
                except Exception as e:  # noqa: BLE001
                    print(f"  {name}: timing: {type(e).__name__}: {str(e)[:200]}", flush=True)
        sdpa_all = times.pop("SDPA") + times.pop("SDPA again")
        s_ms = sorted(sdpa_all)[len(sdpa_all) // 2]
        print(f"hd{hd} causal={causal} N={n} ({n_sets} input sets): SDPA default {fl / s_ms / 1e9:.0f} TFLOP/s "
              f"({', '.join(f'{fl / x / 1e9:.0f}' for x in sdpa_all)}) err {errs['SDPA']:.1e}", flush=True)
        for name, ts in times.items():
            if not ts:
                continue
            med = sorted(ts)[len(ts) // 2]
            r = dict(hd=hd, causal=causal, n=n, name=name, spec=ok[name.replace(" again", "")], ms=med, all_ms=ts,
                     tflops=fl / med / 1e9, sdpa_ms=s_ms, sdpa_all_ms=sdpa_all, vs_sdpa=s_ms / med,
                     max_err=errs[name.replace(" again", "")])
            rows.append(r)
            print(f"    {name:32s} {r['tflops']:6.0f} TFLOP/s {r['vs_sdpa']:.3f}x  "
                  f"({', '.join(f'{fl / x / 1e9:.0f}' for x in ts)})  err {r['max_err']:.1e}", flush=True)
        (out_dir / "tune_h200_attention.json").write_text(json.dumps(dict(env=env, rows=rows), indent=1, default=str))
        del sets, q, k, v
        torch.cuda.empty_cache()
    print(smi("--query-gpu=clocks.sm,temperature.gpu,power.draw", "--format=csv,noheader"))
    print(f"[done at {time.time() - t0:.0f} s]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
