"""Softmax on the H200: the bundled kernel against variants (cache hints, grid shape), bf16 and fp32.

Run on a GPU: python benchmarks/softmax_variants_h200.py [--rows 16384 --cols 16384]
Prints GB/s (matrix read once + written once) and the share of a measured device-to-device copy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kernels import softmax as bundled  # noqa: E402


@triton.jit
def softmax_hinted(out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr,
                   NUM_STAGES: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES):
        row64 = tl.cast(row, tl.int64)
        x = tl.load(in_ptr + row64 * in_row_stride + cols, mask=mask, other=-float("inf"),
                    eviction_policy="evict_first").to(tl.float32)
        num = tl.exp(x - tl.max(x, axis=0))
        y = num * (1.0 / tl.sum(num, axis=0))
        tl.store(out_ptr + row64 * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask,
                 cache_modifier=".cs")


def gbps(fn, nbytes: int) -> float:
    ms = triton.testing.do_bench(fn, warmup=25, rep=200, quantiles=[0.5])
    ms = ms[0] if isinstance(ms, (list, tuple)) else ms
    return nbytes / (ms * 1e-3) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=16384)
    ap.add_argument("--cols", type=int, default=16384)
    ns = ap.parse_args()
    src = torch.empty(2**29, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    copy = gbps(lambda: dst.copy_(src), 2 * src.numel())
    print(f"{torch.cuda.get_device_name()}: copy {copy:.0f} GB/s; torch {torch.__version__}, triton {triton.__version__}")
    for dtype in (torch.bfloat16, torch.float32):
        x = (3 * torch.randn(ns.rows, ns.cols, device="cuda")).to(dtype)
        ref = torch.softmax(x.float(), dim=-1)
        nbytes = 2 * x.numel() * x.element_size()
        block, warps0, stages0 = bundled.launch_params(ns.cols, x.element_size())
        rows = []
        for warps, stages in ((warps0, stages0), (16, 2), (8, 3), (8, 2), (32, 2)):
            out = torch.empty_like(x)
            f = lambda: bundled.launch(x, out, num_warps=warps, num_stages=stages)  # noqa: E731
            f()
            assert torch.allclose(out.float(), ref, atol=1e-3, rtol=1e-2)
            rows.append((f"bundled persistent w{warps} s{stages}", gbps(f, nbytes)))
            programs = bundled.resident_programs(x, out, block, warps, stages)
            g = lambda: softmax_hinted[(min(programs, ns.rows),)](  # noqa: E731
                out, x, x.stride(0), out.stride(0), ns.rows, ns.cols, BLOCK=block, NUM_STAGES=stages, num_warps=warps)
            out.fill_(float("nan"))
            g()
            assert torch.allclose(out.float(), ref, atol=1e-3, rtol=1e-2)
            rows.append((f"hinted persistent w{warps} s{stages}", gbps(g, nbytes)))
        for warps in (8, 16):
            out = torch.empty_like(x)
            h = lambda: softmax_hinted[(ns.rows,)](  # noqa: E731
                out, x, x.stride(0), out.stride(0), ns.rows, ns.cols, BLOCK=block, NUM_STAGES=1, num_warps=warps)
            h()
            assert torch.allclose(out.float(), ref, atol=1e-3, rtol=1e-2)
            rows.append((f"hinted one-row-per-program w{warps}", gbps(h, nbytes)))
        eager = gbps(lambda: torch.softmax(x, dim=-1), nbytes)
        print(f"\n{dtype} {ns.rows}x{ns.cols}: eager {eager:.0f} GB/s")
        for name, v in rows:
            print(f"  {name:40s} {v:7.0f} GB/s  {100 * v / copy:5.1f} % of copy")


if __name__ == "__main__":
    main()
