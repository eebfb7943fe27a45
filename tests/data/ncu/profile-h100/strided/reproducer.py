"""Reproduces copy_strided_kernel as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /work/main/kernels/copy_coalesced_vs_strided.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def copy_strided_kernel(src_ptr, dst_ptr, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    # int64: n * stride passes 2^31 for the large sizes
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs.to(tl.int64) * stride, mask=mask), mask=mask)


def example(device):
    src_ptr = torch.empty_strided((8388608,), (1,), dtype=torch.float32, device=device)
    dst_ptr = torch.empty_strided((1048576,), (1,), dtype=torch.float32, device=device)
    copy_strided_kernel[(1024,)](
        src_ptr,
        dst_ptr,
        1048576,
        8,
        BLOCK=1024,
        num_warps=4,
    )
