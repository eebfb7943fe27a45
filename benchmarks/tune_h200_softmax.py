"""Second sweep (2026-11-23) for the two gallery goals still missed on the H200: softmax bf16 at
16384 x 16384 (>= 92 % of the copy ceiling) and matmul bf16 at 1024^3 (>= 0.95x cuBLAS).

    PYTHONUNBUFFERED=1 python3 benchmarks/tune_h200_softmax.py --out $OUT [--parts softmax,matmul]

Timed as `python -m inspector bench` times: `inspector.bench.timing.bench_gpu_time` (do_bench's
events and L2 flush, the host's launch cost kept out), median of each measurement, every candidate
measured in `--rounds` interleaved rounds (the median round is kept). Every candidate's output is
checked against PyTorch first (NaN-poisoned output buffer). Writes OUT/tune_h200_softmax.json.

Softmax candidates (bf16, 16384 x 16384, plus the fp32 and 4096-column rows as a guard):
- the bundled launch;
- the same pointer kernel with num_warps x num_stages (num_stages 1: no shared-memory pipelining,
  the row loaded straight into registers, several programs resident per SM), several grid sizes
  (programs per SM below the occupancy limit, and one program per row);
- cache hints: `eviction_policy="evict_first"` / `cache_modifier=".cg"` on the load,
  `".cs"` / `evict_first` on the store (the data is touched once);
- exp2 with log2 e folded in;
- whole rows through tensor descriptors (TMA on Hopper, `[1, BLOCK]` blocks, made on the host),
  loads pipelined by `tl.range(..., num_stages)` and TMA stores.
Matmul candidates: small-size configs at 512^3 and 1024^3, bf16 and fp16, next to cuBLAS.
"""

from __future__ import annotations

import argparse
import json
import statistics
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

from kernels import matmul as mm  # noqa: E402
from kernels import softmax as sm  # noqa: E402

COPY_CEILING = 4272.0  # GB/s, the 4 GiB D2D copy of the recorded runs (assets/bench); measured again below
ROUNDS = 3


def smi(*args: str) -> str:
    try:
        return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"nvidia-smi failed: {e}"


def gpu_ms(fn, rep_ms=50, warmup_ms=25) -> float:
    from inspector.bench.timing import bench_gpu_time

    return bench_gpu_time(fn, warmup_ms, rep_ms, [0.5])[0]


def launched(fn, what: str) -> bool:
    """Run a candidate once and wait for it; when it fails, print `what` and the error and say so."""
    try:
        fn()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001
        print(f"  {what} {type(e).__name__}: {str(e)[:200]}")
        return False
    return True


def interleaved(cands: dict, rounds: int) -> dict:
    """name -> median over rounds of the per-round median ms; candidates interleaved round by round."""
    got: dict = {k: [] for k in cands}
    for _ in range(rounds):
        for k, fn in cands.items():
            try:
                got[k].append(gpu_ms(fn))
            except Exception as e:  # noqa: BLE001
                print(f"  {k}: timing failed {type(e).__name__}: {str(e)[:160]}")
    return {k: statistics.median(v) for k, v in got.items() if v}


# ---- softmax ----------------------------------------------------------------------------------
@triton.jit
def sm_ptr(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr,
           NUM_STAGES: tl.constexpr, LOAD_CM: tl.constexpr, LOAD_EP: tl.constexpr, STORE_CM: tl.constexpr,
           STORE_EP: tl.constexpr, EXP2: tl.constexpr):
    """The bundled kernel with its cache hints and exp flavour as parameters."""
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=NUM_STAGES):
        row64 = tl.cast(row, tl.int64)
        x = tl.load(in_ptr + row64 * in_row_stride + cols, mask=mask, other=-float("inf"), cache_modifier=LOAD_CM,
                    eviction_policy=LOAD_EP).to(tl.float32)
        if EXP2:
            x = x * 1.4426950408889634
            num = tl.math.exp2(x - tl.max(x, axis=0))
        else:
            num = tl.exp(x - tl.max(x, axis=0))
        y = num * (1.0 / tl.sum(num, axis=0))
        tl.store(out_ptr + row64 * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask,
                 cache_modifier=STORE_CM, eviction_policy=STORE_EP)


@triton.jit
def sm_tma(in_desc, out_desc, n_rows, n_cols, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr):
    """Whole rows through host-made tensor descriptors ([1, BLOCK] blocks): TMA loads, pipelined by
    the loop's num_stages, and TMA stores. TMA fills out-of-bounds columns with zeros: masked to -inf."""
    cols = tl.arange(0, BLOCK)[None, :]
    mask = cols < n_cols
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=NUM_STAGES):
        x = in_desc.load([row, 0]).to(tl.float32)
        x = tl.where(mask, x, -float("inf"))
        num = tl.exp(x - tl.max(x, axis=1)[:, None])
        y = num * (1.0 / tl.sum(num, axis=1))[:, None]
        out_desc.store([row, 0], y.to(out_desc.dtype))


def _per_sm(kernel, args, kw, warps, target) -> tuple[int, dict]:
    from inspector.occupancy import triton_occupancy

    comp = kernel.warmup(*args, **kw, num_warps=warps, grid=(1,))
    comp._init_handles()
    occ = triton_occupancy(target, warps, comp.n_regs, comp.metadata.shared)
    return max(occ.blocks_per_sm, 1), dict(n_regs=comp.n_regs, n_spills=comp.n_spills, shared=comp.metadata.shared)


def softmax_candidates(x, out, full: bool) -> tuple[dict, dict]:
    from triton.tools.tensor_descriptor import TensorDescriptor

    M, N = x.shape
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    target = triton.runtime.driver.active.get_current_target()
    block = triton.next_power_of_2(N)
    cands: dict = {"bundled": lambda: sm.launch(x, out)}
    info: dict = {}
    args = (out, x, x.stride(0), out.stride(0), M, N)

    def add_ptr(warps, stages, load_cm="", load_ep="", store_cm="", store_ep="", exp2=False, per_sm=None,
                one_per_row=False):
        kw = dict(BLOCK=block, NUM_STAGES=stages, LOAD_CM=load_cm, LOAD_EP=load_ep, STORE_CM=store_cm,
                  STORE_EP=store_ep, EXP2=exp2)
        try:
            occ, meta = _per_sm(sm_ptr, args, kw, warps, target)
        except Exception as e:  # noqa: BLE001
            print(f"  ptr w{warps} s{stages}: {type(e).__name__}: {str(e)[:200]}")
            return
        n = occ if per_sm is None else min(per_sm, occ)
        progs = M if one_per_row else min(n * sms, M)
        name = (f"ptr w{warps} s{stages}" + (f" ld{load_cm}{load_ep}" if load_cm or load_ep else "")
                + (f" st{store_cm}{store_ep}" if store_cm or store_ep else "") + (" exp2" if exp2 else "")
                + (" 1/row" if one_per_row else f" {n}/SM"))
        info[name] = dict(meta, occupancy_per_sm=occ, programs=progs)
        cands[name] = lambda: sm_ptr[(progs,)](*args, **kw, num_warps=warps)

    def add_tma(warps, stages, per_sm=None):
        if (N * x.element_size()) % 16:
            return
        ind = TensorDescriptor(x, [M, N], [x.stride(0), 1], [1, block])
        outd = TensorDescriptor(out, [M, N], [out.stride(0), 1], [1, block])
        kw = dict(BLOCK=block, NUM_STAGES=stages)
        try:
            occ, meta = _per_sm(sm_tma, (ind, outd, M, N), kw, warps, target)
        except Exception as e:  # noqa: BLE001
            print(f"  tma w{warps} s{stages}: {type(e).__name__}: {str(e)[:300]}")
            return
        n = occ if per_sm is None else min(per_sm, occ)
        progs = min(n * sms, M)
        name = f"tma w{warps} s{stages} {n}/SM"
        info[name] = dict(meta, occupancy_per_sm=occ, programs=progs)
        cands[name] = lambda: sm_tma[(progs,)](ind, outd, M, N, **kw, num_warps=warps)

    d_block, d_warps, d_stages = sm.launch_params(N, x.element_size())
    if not full:  # guard sizes: the bundled launch and the few candidates that could replace it
        for w, s in ((d_warps, d_stages), (d_warps, 1), (max(d_warps // 2, 1), 1)):
            add_ptr(w, s)
        for w in sorted({max(d_warps // 2, 1), d_warps, min(2 * d_warps, 32)}):
            add_ptr(w, 1, one_per_row=True)
        add_ptr(d_warps, 1, exp2=True, one_per_row=True)
        add_ptr(d_warps, 1, load_ep="evict_first", store_cm=".cs", one_per_row=True)
        return cands, info
    for w in (4, 8, 16, 32):
        for s in (1, 2, 3, 4):
            add_ptr(w, s)
    for w, s in ((16, 3), (16, 1), (8, 1)):
        add_ptr(w, s, load_ep="evict_first")
        add_ptr(w, s, store_cm=".cs")
        add_ptr(w, s, store_ep="evict_first")
        add_ptr(w, s, load_ep="evict_first", store_cm=".cs")
        add_ptr(w, s, load_ep="evict_first", store_ep="evict_first")
        add_ptr(w, s, load_cm=".cg", store_cm=".cs")
        add_ptr(w, s, exp2=True)
        add_ptr(w, s, one_per_row=True)
        for p in (1, 2):
            add_ptr(w, s, per_sm=p)
    for w in (4, 8, 16, 32):
        for s in (1, 2, 3, 4):
            add_tma(w, s)
    return cands, info


def part_softmax(res: dict, rounds: int, confirm: bool = False) -> None:
    # The copy ceiling as the runner measures it (4 GiB buffer), and a copy moving what softmax moves.
    ceil = {}
    for nbytes in (2**32, 2**29):
        src = torch.empty(nbytes // 4, device="cuda", dtype=torch.float32).normal_()
        dst = torch.empty_like(src)
        ceil[nbytes] = [2 * nbytes / gpu_ms(lambda: dst.copy_(src), rep_ms=200) / 1e6 for _ in range(1 if confirm else 3)]
        del src, dst
        torch.cuda.empty_cache()
    print(f"copy GB/s: 4 GiB {ceil[2**32]}, 512 MiB {ceil[2**29]}", flush=True)
    res["copy_gbps"] = {str(k): v for k, v in ceil.items()}
    copy = COPY_CEILING
    shapes = [(torch.bfloat16, (16384, 16384), True), (torch.float32, (16384, 16384), False),
              (torch.bfloat16, (16384, 4096), False), (torch.bfloat16, (16384, 1024), False)]
    if confirm:  # second call: the one-program-per-row candidates at every long-row size, both dtypes
        shapes = [(dt, (16384, n), False) for n in (16384, 8192, 4096, 2048) for dt in (torch.bfloat16, torch.float32)]
    for dtype, shape, full in shapes:
        x = (3 * torch.randn(*shape, device="cuda")).to(dtype)
        ref = torch.softmax(x.float(), dim=-1)
        out = torch.empty_like(x)
        nbytes = 2 * x.numel() * x.element_size()
        cands, info = softmax_candidates(x, out, full)
        ok = {}
        for name, fn in cands.items():
            out.fill_(float("nan"))
            if not launched(fn, f"{name}: launch failed"):
                continue
            if torch.allclose(out.float(), ref, atol=1e-3, rtol=1e-2):
                ok[name] = fn
            else:
                print(f"  {name}: WRONG (max err {(out.float() - ref).abs().nan_to_num(9.0).max().item():.3g})")
        ms = interleaved(ok, rounds)
        key = f"{str(dtype).split('.')[-1]} {shape[0]}x{shape[1]}"
        rows = sorted(((nbytes / t / 1e6, n) for n, t in ms.items()), reverse=True)
        res.setdefault("softmax", {})[key] = [dict(name=n, gbps=g, of_copy=g / copy, **info.get(n, {})) for g, n in rows]
        bund = nbytes / ms["bundled"] / 1e6 if "bundled" in ms else float("nan")
        print(f"softmax {key}: bundled {bund:.0f} GB/s = {100 * bund / copy:.1f}% of {copy:.0f}; top:", flush=True)
        for g, n in rows[: (14 if full else 8)]:
            meta = info.get(n, {})
            print(f"    {n:40s} {g:6.0f} GB/s {100 * g / copy:5.1f}%  regs {meta.get('n_regs')} "
                  f"spills {meta.get('n_spills')} smem {meta.get('shared')} occ {meta.get('occupancy_per_sm')}")
        del x, ref, out
        torch.cuda.empty_cache()


# ---- matmul (small size class) ------------------------------------------------------------------
MM_SMALL = [  # (BM, BN, BK, stages, warps, flatten, group)
    (64, 128, 64, 6, 4, True, 8),  # the bundled small-class config
    (64, 128, 64, 4, 4, True, 8),
    (64, 128, 64, 8, 4, True, 8),
    (64, 128, 64, 6, 4, False, 8),
    (64, 128, 64, 6, 4, True, 4),
    (64, 128, 64, 6, 4, True, 16),
    (64, 128, 64, 6, 4, True, 1),
    (64, 128, 64, 6, 8, True, 8),
    (64, 128, 128, 3, 4, True, 8),
    (64, 128, 128, 4, 4, True, 8),
    (64, 128, 32, 8, 4, True, 8),
    (64, 128, 256, 2, 4, True, 8),
    (128, 64, 64, 6, 4, True, 8),
    (128, 64, 128, 4, 4, True, 8),
    (128, 64, 64, 6, 8, True, 8),
    (128, 64, 128, 3, 8, True, 8),
    (128, 128, 64, 4, 8, True, 8),
    (128, 128, 128, 3, 8, True, 8),
    (64, 256, 64, 4, 4, True, 8),
    (64, 64, 128, 4, 4, True, 8),
]


def part_matmul(res: dict, rounds: int) -> None:
    from triton.tools.tensor_descriptor import TensorDescriptor

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    kern = mm.matmul_kernel.fn  # the JIT function under the autotuner: every config launched directly
    for dtype_name, dtype in (("bf16", torch.bfloat16), ("fp16", torch.float16)):
        for n in (1024, 512):
            a, b = mm.make_inputs((n, n, n), "cuda", dtype)
            ref = (a.float() @ b.float())
            c_cublas = torch.empty((n, n), device="cuda", dtype=dtype)
            cands = {"cublas": lambda: torch.matmul(a, b, out=c_cublas)}
            cands["bundled launch()"] = lambda: mm.launch(a, b)
            for bm, bn, bk, st, w, fl, g in MM_SMALL:
                c = torch.full((n, n), float("nan"), device="cuda", dtype=dtype)
                ad = TensorDescriptor.from_tensor(a, [bm, bk])
                bd = TensorDescriptor.from_tensor(b, [bk, bn])
                cd = TensorDescriptor.from_tensor(c, [bm, bn])
                progs = min(triton.cdiv(n, bm) * triton.cdiv(n, bn), sms)
                kw = dict(ACTIVATION="", BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=g, FLATTEN=fl, num_stages=st,
                          num_warps=w)

                def fn(ad=ad, bd=bd, cd=cd, progs=progs, kw=kw):
                    kern[(progs,)](ad, bd, cd, n, n, n, **kw)

                if not launched(fn, f"matmul {[bm, bn, bk, st, w, fl, g]}:"):
                    continue
                err = ((c.float() - ref).norm() / ref.norm()).item()
                if not err < 1e-2:
                    print(f"  matmul {[bm, bn, bk, st, w, fl, g]}: WRONG rel err {err}")
                    continue
                cands[str([bm, bn, bk, st, w, fl, g])] = fn
            ms = interleaved(cands, rounds)
            cub = ms["cublas"]
            rows = sorted(((t, k) for k, t in ms.items()))
            res.setdefault("matmul", {})[f"{dtype_name} {n}^3"] = [
                dict(cfg=k, ms=t, vs_cublas=cub / t, tflops=2 * n**3 / t / 1e9) for t, k in rows]
            print(f"matmul {dtype_name} {n}^3: cuBLAS {cub * 1e3:.2f} us; bundled config "
                  f"{cub / ms.get(str(list(MM_SMALL[0])), float('nan')):.3f}x; top:", flush=True)
            for t, k in rows[:8]:
                print(f"    {k:36s} {t * 1e3:6.2f} us {cub / t:.3f}x")
            del a, b, ref
            torch.cuda.empty_cache()


def part_softmax_confirm(res: dict, rounds: int) -> None:
    part_softmax(res, rounds, confirm=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--parts", default="softmax,matmul")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ns = ap.parse_args()
    t0 = time.time()
    res: dict = dict(env=dict(smi=smi("--query-gpu=name,driver_version,clocks.sm,clocks.mem,"
                                      "clocks.applications.graphics,temperature.gpu,power.draw,power.limit",
                                      "--format=csv,noheader"),
                              torch=torch.__version__, triton=triton.__version__, cuda=torch.version.cuda))
    print(json.dumps(res["env"]), flush=True)
    for part in ns.parts.split(","):
        try:
            globals()[f"part_{part}"](res, ns.rounds)
        except Exception:  # noqa: BLE001
            traceback.print_exc()
        print(f"[{part} done at {time.time() - t0:.0f} s]", flush=True)
        Path(ns.out).mkdir(parents=True, exist_ok=True)
        (Path(ns.out) / "tune_h200_softmax.json").write_text(json.dumps(res, indent=1, default=str))
    print(smi("--query-gpu=clocks.sm,temperature.gpu,power.draw", "--format=csv,noheader"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
