"""Reproduces softmax_kernel as the inspector compiled it, launched by example().

Written by Triton Kernel Inspector from /work/main/kernels/softmax.py; open it in the inspector or run it under a GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(
    out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols,
    BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr, ROWS: tl.constexpr = 1,
):
    if ROWS == 1:  # one row per loop step, as a 1-D block
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0), num_stages=NUM_STAGES):
            row64 = tl.cast(row, tl.int64)  # row * stride can pass 2^31 on large tensors
            x = tl.load(in_ptr + row64 * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
            # exp(v) = 2^(v log2 e): written as exp2, it becomes ex2.approx.ftz (tl.exp's ex2.approx
            # keeps denormals, a few more instructions per element; a result below 1e-38 is 0 either way
            # within the tolerance).
            num = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
            y = num * (1.0 / tl.sum(num, axis=0))
            tl.store(out_ptr + row64 * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
    else:  # ROWS rows per loop step, as a ROWS x BLOCK tile (short rows)
        cols = tl.arange(0, BLOCK)[None, :]
        mask = cols < n_cols
        for first in tl.range(tl.program_id(0) * ROWS, n_rows, tl.num_programs(0) * ROWS, num_stages=NUM_STAGES):
            rows = first + tl.arange(0, ROWS)[:, None]
            # Rows past the end (the last block of ROWS) read the last row again and store nothing.
            rows64 = tl.cast(tl.minimum(rows, n_rows - 1), tl.int64)  # row * stride can pass 2^31
            x = tl.load(in_ptr + rows64 * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
            num = tl.exp2((x - tl.max(x, axis=1)[:, None]) * 1.4426950408889634)
            y = num * (1.0 / tl.sum(num, axis=1))[:, None]
            tl.store(out_ptr + rows64 * out_row_stride + cols, y.to(out_ptr.dtype.element_ty),
                     mask=mask & (rows < n_rows))


def example(device):
    out_ptr = torch.empty_strided((4096, 2048), (2048, 1), dtype=torch.float32, device=device)
    in_ptr = torch.empty_strided((4096, 2048), (2048, 1), dtype=torch.float32, device=device)
    softmax_kernel[(4096,)](
        out_ptr,
        in_ptr,
        2048,
        2048,
        4096,
        2048,
        BLOCK=2048,
        NUM_STAGES=1,
        ROWS=1,
        num_warps=4,
    )
