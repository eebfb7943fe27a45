"""Kernels whose accesses lose a fact the compiler needs for 128-bit accesses, written as a user
would (the two of the fix issue: a jagged loop over loaded bounds, a row kernel with a run-time
leading dimension and a masked tail), each with an example whose data keeps the promise and a
twin whose data breaks it."""

from __future__ import annotations

from pathlib import Path

JAGGED_LOOP = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def jagged_sum(values_ptr, offsets_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets_ptr + row)
    end = tl.load(offsets_ptr + row + 1)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(start, end, BLOCK):
        cols = i + tl.arange(0, BLOCK)
        acc += tl.load(values_ptr + cols, mask=cols < end, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc))


def example(device):
    lengths = torch.tensor(LENGTHS)
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    offsets[1:] = torch.cumsum(lengths, 0)
    values = torch.randn(int(offsets[-1]), device=device)
    out = torch.empty(len(lengths), device=device)
    jagged_sum[(len(lengths),)](values, offsets.to(device), out, BLOCK=256, num_warps=4)
    return out
'''
JAGGED_LOAD_LINE = 14
KEEPS = "[256, 1024, 64, 512]"  # every row a multiple of 64 elements
BREAKS = "[256, 1026, 64, 510]"

ROWS = '''\
import torch
import triton
import triton.language as tl


@triton.jit
def row_scale(x_ptr, y_ptr, ld, n_cols, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * ld + cols, mask=mask)
    tl.store(y_ptr + row * ld + cols, x * scale, mask=mask)


def example(device):
    x = torch.randn(64, COLS, device=device)
    y = torch.empty_like(x)
    row_scale[(64,)](x, y, x.stride(0), x.shape[1], 2.0, BLOCK=1024)
    return y
'''
ROWS_LOAD_LINE, ROWS_STORE_LINE, ROWS_MASK_LINE = 11, 12, 10


def jagged(directory: Path, lengths: str = KEEPS) -> Path:
    path = Path(directory) / "jagged_loop.py"
    path.write_text(JAGGED_LOOP.replace("LENGTHS", lengths))
    return path


def rows(directory: Path, cols: int = 1000) -> Path:
    path = Path(directory) / "row_scale.py"
    path.write_text(ROWS.replace("COLS", str(cols)))
    return path
