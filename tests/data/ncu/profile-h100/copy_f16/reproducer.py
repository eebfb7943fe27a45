"""Reproduces copy_f16 as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /work/main/tests/data/ncu/small_registers.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def copy_f16(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def example(device):
    x_ptr = torch.empty_strided((1048576,), (1,), dtype=torch.float16, device=device)
    y_ptr = torch.empty_strided((1048576,), (1,), dtype=torch.float16, device=device)
    copy_f16[(1024,)](
        x_ptr,
        y_ptr,
        1048576,
        BLOCK=1024,
    )
