"""Reproduces add_kernel as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /work/main/kernels/add.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def example(device):
    x_ptr = torch.empty_strided((4096,), (1,), dtype=torch.float32, device=device)
    y_ptr = torch.empty_strided((4096,), (1,), dtype=torch.float32, device=device)
    out_ptr = torch.empty_strided((4096,), (1,), dtype=torch.float32, device=device)
    add_kernel[(4,)](
        x_ptr,
        y_ptr,
        out_ptr,
        4096,
        BLOCK=1024,
    )
