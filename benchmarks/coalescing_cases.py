"""Memory-access patterns whose coalescing the inspector predicts and Nsight Compute measures.

Each case is one launch of one small kernel; `benchmarks/coalescing_fidelity.py` measures it with
`ncu --section SourceCounters` (per Python line: `L2 Theoretical Sectors Global` and its ideal) on
a GPU and compares the inspector's prediction for the same launch (`launch_line_sectors`). What
each pattern teaches, for one warp's request of fp32 values (32 lanes, 32-byte sectors):

- `copy_strided` with STRIDE 1: 16 bytes per lane (`ld.global.v4`), 512 contiguous bytes, 16
  sectors: ideal. STRIDE 2, 4, 8, 32: the layout still gives each thread 4 offsets in a row, but
  `offs * STRIDE` is not contiguous, so the loads are scalar and one instruction's lanes are
  4 * STRIDE * 4 bytes apart: 32 sectors for the 4 that its 128 bytes need (8x). fp16/bf16 the
  same with 2-byte values.
- `copy_runtime_stride`: the stride is an argument. 16 is specialised (`tt.divisibility = 16`),
  3 is not; neither is known to be 1, so both are strided.
- `add` with n = 2^20 - 1: `n` is not a multiple of 16, so no 16-byte group is known to be
  entirely in or out of the mask; loads go scalar, lanes 16 bytes apart: 16 sectors for 4 (4x).
- `tile_2d` on a 1000 x 1000 row-major matrix: 64 x 64 tiles, masked at the right and bottom edges.
- `column_tile`: the same tile of a column-major matrix (stride along rows is 1): Triton makes
  the rows the fast dimension and the reads stay coalesced.
- `column_walk`: one column of a row-major matrix, one value per row: every lane its own sector.
- `broadcast`: every lane reads the same address: one sector per request, nothing to improve.
- `gather`: `x[idx]` with random indices: the pattern comes from the data.
- `jagged_sum`: row starts loaded from memory: the compiler cannot know their alignment.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

N = 1 << 20
BLOCK = 1024


@triton.jit
def copy_strided(x, out, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs * STRIDE, mask=m)
    tl.store(out + offs, v, mask=m)


@triton.jit
def copy_runtime_stride(x, out, n, stride, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs * stride, mask=m)
    tl.store(out + offs, v, mask=m)


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(x + offs, mask=m)
    b = tl.load(y + offs, mask=m)
    tl.store(out + offs, a + b, mask=m)


@triton.jit
def tile_2d(x, out, M, N, stride_m, stride_n, BM: tl.constexpr, BN: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    m = (rm[:, None] < M) & (rn[None, :] < N)
    t = tl.load(x + rm[:, None] * stride_m + rn[None, :] * stride_n, mask=m)
    tl.store(out + rm[:, None] * N + rn[None, :], t, mask=m)


@triton.jit
def column_walk(x, out, M, stride_m, col, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = rows < M
    v = tl.load(x + rows * stride_m + col, mask=m)
    tl.store(out + rows, v, mask=m)


@triton.jit
def broadcast(x, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    v = tl.load(x + offs * 0)
    tl.store(out + offs, v)


@triton.jit
def gather(x, idx, out, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    i = tl.load(idx + offs)
    v = tl.load(x + i)
    tl.store(out + offs, v)


@triton.jit
def jagged_sum(values, offsets, out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    start = tl.load(offsets + row)
    end = tl.load(offsets + row + 1)
    idx = tl.arange(0, BLOCK)
    x = tl.load(values + start + idx, mask=idx < end - start, other=0.0)
    tl.store(out + row, tl.sum(x, axis=0))


def _copy(device: str, dtype: torch.dtype, stride: int) -> None:
    x = torch.randn(N * stride, device=device).to(dtype)
    out = torch.empty(N, device=device, dtype=dtype)
    copy_strided[(N // BLOCK,)](x, out, N, STRIDE=stride, BLOCK=BLOCK, num_warps=4)


def _runtime(device: str, stride: int) -> None:
    x = torch.randn(N * stride, device=device)
    out = torch.empty(N, device=device)
    copy_runtime_stride[(N // BLOCK,)](x, out, N, stride, BLOCK=BLOCK, num_warps=4)


def _add(device: str, n: int) -> None:
    x, y = torch.randn(n, device=device), torch.randn(n, device=device)
    add[(triton.cdiv(n, BLOCK),)](x, y, torch.empty_like(x), n, BLOCK=BLOCK, num_warps=4)


def _tile(device: str, column_major: bool) -> None:
    M = N_ = 1000
    x = torch.randn(N_, M, device=device).t() if column_major else torch.randn(M, N_, device=device)
    out = torch.empty(M * N_, device=device)
    tile_2d[(triton.cdiv(M, 64), triton.cdiv(N_, 64))](x, out, M, N_, x.stride(0), x.stride(1), BM=64, BN=64,
                                                       num_warps=4)


def _column(device: str) -> None:
    M, K = 1 << 16, 1000
    x = torch.randn(M, K, device=device)
    out = torch.empty(M, device=device)
    column_walk[(M // BLOCK,)](x, out, M, x.stride(0), 3, BLOCK=BLOCK, num_warps=4)


def _broadcast(device: str) -> None:
    x = torch.randn(16, device=device)
    broadcast[(N // BLOCK,)](x, torch.empty(N, device=device), BLOCK=BLOCK, num_warps=4)


def _gather(device: str) -> None:
    g = torch.Generator(device="cpu").manual_seed(0)
    idx = torch.randint(0, N, (N,), generator=g, dtype=torch.int32).to(device)
    gather[(N // BLOCK,)](torch.randn(N, device=device), idx, torch.empty(N, device=device), BLOCK=BLOCK,
                          num_warps=4)


def _jagged(device: str) -> None:
    lengths = torch.tensor([100, 1000, 37, 512, 1024, 3, 777, 64] * 64)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)]).to(torch.int32).to(device)
    values = torch.randn(int(lengths.sum()), device=device)
    jagged_sum[(len(lengths),)](values, offsets, torch.empty(len(lengths), device=device), BLOCK=BLOCK, num_warps=4)


# name -> (kernel name, launch(device))
CASES = {
    **{f"copy_fp32_stride{s}": ("copy_strided", lambda d, s=s: _copy(d, torch.float32, s)) for s in (1, 2, 4, 8, 32)},
    **{f"copy_fp16_stride{s}": ("copy_strided", lambda d, s=s: _copy(d, torch.float16, s)) for s in (1, 2, 8)},
    **{f"copy_bf16_stride{s}": ("copy_strided", lambda d, s=s: _copy(d, torch.bfloat16, s)) for s in (1, 4)},
    "copy_runtime_stride3": ("copy_runtime_stride", lambda d: _runtime(d, 3)),
    "copy_runtime_stride16": ("copy_runtime_stride", lambda d: _runtime(d, 16)),
    "add_n": ("add", lambda d: _add(d, N)),
    "add_n_minus_1": ("add", lambda d: _add(d, N - 1)),
    "tile_row_major": ("tile_2d", lambda d: _tile(d, False)),
    "tile_column_major": ("tile_2d", lambda d: _tile(d, True)),
    "column_walk": ("column_walk", _column),
    "broadcast": ("broadcast", _broadcast),
    "gather": ("gather", _gather),
    "jagged_sum": ("jagged_sum", _jagged),
}


def run(names: list[str] | None = None, device: str = "cuda") -> None:
    """Launch the named cases (all by default), in CASES order, once each."""
    for name, (_, launch) in CASES.items():
        if names is None or name in names:
            launch(device)
    if device == "cuda":
        torch.cuda.synchronize()
