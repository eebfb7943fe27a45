"""Launch-parameter sweep of the bundled matmul, attention and softmax on an H200 (one call's worth).

    PYTHONUNBUFFERED=1 python3 benchmarks/tune_h200.py --out $OUT [--parts matmul,attention,softmax]

Each candidate is launched directly (the autotuner bypassed), checked against PyTorch on random
data, and timed with `triton.testing.do_bench` (median, L2 flushed before each repetition) next to
the PyTorch baseline timed in the same process: cuBLAS for matmul, scaled_dot_product_attention
with PyTorch's own backend choice and forced onto cuDNN and flash for attention, and a
device-to-device copy for softmax. Writes OUT/tune_h200.json and prints a short table per part.
What it settled is in docs/kernels-performance.md.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from kernels import attention as att  # noqa: E402
from kernels import matmul as mm  # noqa: E402
from kernels import softmax as sm  # noqa: E402


def ms_of(fn, rep=100, warmup=25) -> float:
    v = do_bench(fn, warmup=warmup, rep=rep, quantiles=[0.5])
    return float(v[0] if isinstance(v, (list, tuple)) else v)


def smi(*args: str) -> str:
    try:
        return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"nvidia-smi failed: {e}"


# ---- matmul -----------------------------------------------------------------------------------
@triton.jit
def matmul_host_desc(a_desc, b_desc, c_desc, M, N, K, ACTIVATION: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, FLATTEN: tl.constexpr):
    """The bundled kernel with descriptors made on the host (kernel parameters, no tensormap writes)."""
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), num_pid_m * num_pid_n, tl.num_programs(0), flatten=FLATTEN):
        pid_m, pid_n = mm._tile_coords(tile, num_pid_m, num_pid_n, GROUP_M)
        off_m = pid_m * BLOCK_M
        off_n = pid_n * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kt in range(k_tiles):
            a = a_desc.load([off_m, kt * BLOCK_K])
            b = b_desc.load([kt * BLOCK_K, off_n])
            acc = tl.dot(a, b, acc)
        if ACTIVATION == "leaky_relu":
            acc = tl.where(acc >= 0, acc, 0.01 * acc)
        c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


MM_CANDIDATES = [  # (BM, BN, BK, stages, warps, flatten)
    (128, 256, 64, 3, 8, True),
    (128, 256, 64, 3, 8, False),
    (256, 128, 64, 3, 8, True),
    (128, 128, 64, 4, 8, True),
    (128, 128, 64, 5, 8, True),
    (128, 128, 64, 4, 4, True),
    (64, 256, 64, 4, 4, True),
    (64, 128, 64, 4, 4, True),
    (64, 128, 64, 6, 4, True),
    (128, 64, 64, 4, 4, True),
    (64, 64, 64, 6, 4, True),
]


def part_matmul(rows: list) -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    triton.set_allocator(lambda size, align, stream: torch.empty(size, device="cuda", dtype=torch.int8))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for dtype_name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        for n in (1024, 2048, 4096, 8192):
            a, b = mm.make_inputs((n, n, n), "cuda", dtype)
            ref = a @ b
            cublas = ms_of(lambda: a @ b)
            flops = 2 * n**3
            best = None
            for bm, bn, bk, st, w, fl in MM_CANDIDATES:
                tiles = triton.cdiv(n, bm) * triton.cdiv(n, bn)
                grids = {"persistent": min(tiles, sms)}
                if tiles > sms:
                    grids["one-per-tile"] = tiles
                for desc in ("host",):  # 2026-11-23 also "device" (tl.make_tensor_descriptor): 10-25 % slower up to 2048^3
                    for gname, g in grids.items():
                        if desc == "host" and gname != "persistent" and tiles > 2 * sms:
                            continue
                        c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
                        kw = dict(ACTIVATION="", BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, FLATTEN=fl,
                                  num_stages=st, num_warps=w)
                        try:
                            if True:
                                ad = TensorDescriptor.from_tensor(a, [bm, bk])
                                bd = TensorDescriptor.from_tensor(b, [bk, bn])
                                cd = TensorDescriptor.from_tensor(c, [bm, bn])
                                fn = lambda: matmul_host_desc[(g,)](ad, bd, cd, n, n, n, **kw)  # noqa: E731
                            fn()
                            torch.cuda.synchronize()
                            err = ((c.float() - ref.float()).norm() / ref.float().norm()).item()
                            ok = err < 1e-2
                            t = ms_of(fn) if ok else float("nan")
                        except Exception as e:  # noqa: BLE001
                            rows.append(dict(part="matmul", dtype=dtype_name, n=n, cfg=[bm, bn, bk, st, w, fl],
                                             desc=desc, grid=gname, error=f"{type(e).__name__}: {str(e)[:200]}"))
                            print(f"matmul {dtype_name} {n} {bm}x{bn}x{bk} s{st} w{w} {desc} {gname}: "
                                  f"{type(e).__name__}")
                            continue
                        r = dict(part="matmul", dtype=dtype_name, n=n, cfg=[bm, bn, bk, st, w, fl], desc=desc,
                                 grid=gname, programs=g, ms=t, cublas_ms=cublas, rel_err=err,
                                 tflops=flops / t / 1e9, vs_cublas=cublas / t)
                        rows.append(r)
                        if ok and (best is None or t < best["ms"]):
                            best = r
            print(f"matmul {dtype_name} {n}^3: cuBLAS {cublas:.4f} ms ({flops / cublas / 1e9:.0f} TF/s); best "
                  f"{best['cfg']} {best['desc']} {best['grid']} {best['ms']:.4f} ms = {best['vs_cublas']:.3f}x",
                  flush=True)
            top = sorted((r for r in rows if r.get("part") == "matmul" and r["dtype"] == dtype_name and r["n"] == n
                          and "ms" in r and r["ms"] == r["ms"]), key=lambda r: r["ms"])[:5]
            for r in top:
                print(f"    {r['cfg']} {r['desc']:6s} {r['grid']:12s} {r['ms']:.4f} ms {r['vs_cublas']:.3f}x")
            del a, b, ref
            torch.cuda.empty_cache()


# ---- attention --------------------------------------------------------------------------------
# warp_specialize (tl.range(..., warp_specialize=True)) was tried on 2026-11-23 with a WARP_SPECIALIZE
# constexpr since removed: under Triton 3.6 on sm_90 it crashed the compiler for causal attention
# (NVGPUWarpSpecialization) and gained nothing measurable otherwise; the flag below is ignored.
ATT_CANDIDATES = [  # (BM, BN, stages, warps, warp_specialize)
    (128, 64, 3, 4, False),
    (128, 64, 4, 4, False),
    (128, 64, 3, 8, False),
    (128, 128, 3, 8, False),
    (128, 128, 2, 8, False),
    (256, 64, 3, 16, False),
    (256, 128, 2, 16, False),
]


def sdpa_with(backend):
    from torch.nn.attention import sdpa_kernel

    def f(q, k, v, causal):
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return f


def part_attention(rows: list) -> None:
    from torch.nn.attention import SDPBackend

    from triton.tools.tensor_descriptor import TensorDescriptor

    broken: set = set()
    for hd in (64, 128):
        for causal in (False, True):
            for n in (2048, 4096, 8192):
                q, k, v = att.make_inputs((4, 32, n), "cuda", head_dim=hd)
                ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
                fl = att.flops((4, 32, n), causal=causal, head_dim=hd)
                base = {"default": ms_of(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))}
                for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
                    try:
                        f = sdpa_with(be)
                        base[name] = ms_of(lambda: f(q, k, v, causal))
                    except Exception as e:  # noqa: BLE001
                        base[name] = float("nan")
                        print(f"sdpa {name}: {type(e).__name__}: {str(e)[:120]}")
                best = None
                for bm, bn, st, w, ws in ATT_CANDIDATES:
                    key = (hd, causal, bm, bn, st, w, ws)
                    if key in broken:
                        continue
                    o = torch.full_like(q, float("nan"))
                    sm_scale = 1 / math.sqrt(hd)

                    rows2 = 4 * 32 * n
                    qd, kd, vd, od = (TensorDescriptor(t, [rows2, hd], [hd, 1], [bm if t is q or t is o else bn, hd])
                                      for t in (q, k, v, o))

                    def fn():
                        att.attention_kernel.fn[(n // bm, 4 * 32)](
                            qd, kd, vd, od, sm_scale, 4, 32, n, HEAD_DIM=hd, CAUSAL=causal, BLOCK_M=bm, BLOCK_N=bn,
                            num_stages=st, num_warps=w)
                    try:
                        fn()
                        torch.cuda.synchronize()
                        err = ((o.float() - ref.float()).norm() / ref.float().norm()).item()
                        t = ms_of(fn) if err < 1e-2 else float("nan")
                    except Exception as e:  # noqa: BLE001
                        broken.add(key)
                        print(f"attention hd{hd} causal={causal} {bm}x{bn} s{st} w{w} ws={ws}: "
                              f"{type(e).__name__}: {str(e)[:160]}")
                        rows.append(dict(part="attention", hd=hd, causal=causal, n=n, cfg=[bm, bn, st, w, ws],
                                         error=f"{type(e).__name__}: {str(e)[:300]}"))
                        continue
                    r = dict(part="attention", hd=hd, causal=causal, n=n, cfg=[bm, bn, st, w, ws], ms=t, rel_err=err,
                             tflops=fl / t / 1e9, **{f"sdpa_{k2}_ms": v2 for k2, v2 in base.items()},
                             vs_default=base["default"] / t)
                    rows.append(r)
                    if t == t and (best is None or t < best["ms"]):
                        best = r
                print(f"attention hd{hd} causal={causal} N={n}: default {fl / base['default'] / 1e9:.0f} TF/s, "
                      f"cudnn {fl / base['cudnn'] / 1e9:.0f}, flash {fl / base['flash'] / 1e9:.0f}; best "
                      f"{best['cfg']} {best['tflops']:.0f} TF/s = {best['vs_default']:.3f}x default", flush=True)
                top = sorted((r for r in rows if r.get("part") == "attention" and r["hd"] == hd
                              and r["causal"] == causal and r["n"] == n and r.get("ms", float("nan")) == r.get("ms")),
                             key=lambda r: r["ms"])[:4]
                for r in top:
                    print(f"    {r['cfg']} {r['tflops']:.0f} TF/s {r['vs_default']:.3f}x")
                del q, k, v, ref
                torch.cuda.empty_cache()


# ---- softmax ----------------------------------------------------------------------------------
@triton.jit
def softmax_rows(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr,
                 ROWS: tl.constexpr, NUM_STAGES: tl.constexpr):
    """ROWS rows per loop iteration; exp2 with log2(e) folded into one multiply-add."""
    cols = tl.arange(0, BLOCK)
    r = tl.arange(0, ROWS)
    for row0 in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=NUM_STAGES):
        rows = tl.cast(row0 + r, tl.int64)
        mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        x = tl.load(in_ptr + rows[:, None] * in_row_stride + cols[None, :], mask=mask, other=-float("inf"))
        x = x.to(tl.float32) * 1.4426950408889634
        num = tl.math.exp2(x - tl.max(x, axis=1)[:, None])
        y = num * (1.0 / tl.sum(num, axis=1))[:, None]
        tl.store(out_ptr + rows[:, None] * out_row_stride + cols[None, :], y.to(out_ptr.dtype.element_ty), mask=mask)


def part_softmax(rows: list) -> None:
    from inspector.bench.ceilings import measure_ceilings
    from inspector.occupancy import triton_occupancy

    ceil = measure_ceilings("H200")
    copy = ceil.copy_gbps
    print(f"softmax: copy ceiling as the runner measures it {copy:.0f} GB/s; trials {ceil.trials}", flush=True)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    target = triton.runtime.driver.active.get_current_target()
    for dtype in (torch.bfloat16, torch.float32):
        for shape in ((16384, 16384), (16384, 4096), (16384, 1024)):
            x = (3 * torch.randn(*shape, device="cuda")).to(dtype)
            ref = torch.softmax(x.float(), dim=-1)
            nbytes = 2 * x.numel() * x.element_size()
            block = triton.next_power_of_2(shape[1])
            d = sm.launch_params(shape[1], x.element_size())
            out = torch.empty_like(x)
            cands = [("bundled default", lambda: sm.launch(x, out))]
            for warps in (8, 16, 32):
                for stages in (2, 3, 4):
                    for R in (1, 2, 4):
                        if block * R // (32 * warps) < 4 or block * R // (32 * warps) > 64:
                            continue
                        if (stages - 1) * block * R * x.element_size() > 200 * 1024:
                            continue
                        try:
                            comp = softmax_rows.warmup(out, x, x.stride(0), out.stride(0), shape[0], shape[1],
                                                       BLOCK=block, ROWS=R, NUM_STAGES=stages, num_warps=warps,
                                                       grid=(1,))
                            comp._init_handles()
                            per_sm = triton_occupancy(target, warps, comp.n_regs, comp.metadata.shared).blocks_per_sm
                        except Exception as e:  # noqa: BLE001
                            print(f"softmax rows R{R} w{warps} s{stages}: {type(e).__name__}")
                            continue
                        progs = min(max(per_sm, 1) * sms, triton.cdiv(shape[0], R))
                        cands.append((f"rows R{R} w{warps} s{stages} ({per_sm}/SM)",
                                      lambda R=R, warps=warps, stages=stages, progs=progs: softmax_rows[(progs,)](
                                          out, x, x.stride(0), out.stride(0), shape[0], shape[1], BLOCK=block, ROWS=R,
                                          NUM_STAGES=stages, num_warps=warps)))
            res = []
            for name, fn in cands:
                out.fill_(float("nan"))
                fn()
                torch.cuda.synchronize()
                if not torch.allclose(out.float(), ref, atol=1e-3, rtol=1e-2):
                    print(f"softmax {name}: WRONG")
                    continue
                g = nbytes / ms_of(fn, rep=200) / 1e6
                res.append((g, name))
                rows.append(dict(part="softmax", dtype=str(dtype), shape=list(shape), name=name, gbps=g,
                                 of_copy=g / copy))
            eager = nbytes / ms_of(lambda: torch.softmax(x, dim=-1)) / 1e6
            res.sort(reverse=True)
            print(f"softmax {dtype} {shape}: default (w{d[1]} s{d[2]}) "
                  f"{[g for g, nm in res if nm == 'bundled default'][0] / copy * 100:.1f}% of copy; eager "
                  f"{eager / copy * 100:.1f}%; best:", flush=True)
            for g, nm in res[:4]:
                print(f"    {nm:34s} {g:6.0f} GB/s {100 * g / copy:5.1f}%")
            del x, ref, out
            torch.cuda.empty_cache()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--parts", default="softmax,matmul,attention")
    ns = ap.parse_args()
    t0 = time.time()
    env = dict(smi=smi("--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.applications.graphics,"
                       "temperature.gpu,power.draw,power.limit", "--format=csv"),
               torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda)
    print(json.dumps(env), flush=True)
    rows: list = []
    for part in ns.parts.split(","):
        try:
            globals()[f"part_{part}"](rows)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        print(f"[{part} done at {time.time() - t0:.0f} s]", flush=True)
        Path(ns.out).mkdir(parents=True, exist_ok=True)
        (Path(ns.out) / "tune_h200.json").write_text(json.dumps(dict(env=env, rows=rows), indent=1, default=str))
    print(smi("--query-gpu=clocks.sm,temperature.gpu,power.draw", "--format=csv,noheader"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
