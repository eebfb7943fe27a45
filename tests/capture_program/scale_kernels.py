"""An autotuned kernel. Its configs are timed by wall clock (the interpreter has no GPU timer)."""

import time

import torch
import triton
import triton.language as tl


def wall_clock_bench(kernel_call, quantiles):
    t0 = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t0) * 1e3
    return [ms, ms, ms]


@triton.autotune(
    configs=[triton.Config({"BLOCK": 128}, num_warps=4), triton.Config({"BLOCK": 256}, num_warps=8)],
    key=["n"],
    do_bench=wall_clock_bench,
)
@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * alpha, mask=mask)


def scale(x, alpha):
    out = torch.empty_like(x)
    n = x.numel()
    scale_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, alpha)
    return out


def example(device):
    scale(torch.randn(3000, device=device), 0.5)
