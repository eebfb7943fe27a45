"""A small kernel a training loop launches many times."""

import torch
import triton
import triton.language as tl


@triton.jit
def axpy_kernel(x_ptr, y_ptr, n, a, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, a * tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def axpy(a, x, y):
    axpy_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), a, BLOCK=1024)


def example(device):
    axpy(0.1, torch.randn(4096, device=device), torch.randn(4096, device=device))
