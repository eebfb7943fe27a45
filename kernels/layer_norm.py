"""Layer norm forward: out = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, over each row.

Each row stays on chip between the two reductions (mean, then variance) and the normalisation,
so x is read from memory exactly once; statistics are accumulated in fp32 whatever the storage
type. Rows up to 64 KB (16384 fp32 or 32768 bf16 values) fit. Two launches, chosen per row length
by `launch_shape` from `MEASURED_SHAPES` (the fastest of benchmarks/tune_h200_rows.py on an H200 at
each row length of SIZES):
- one program per ROWS rows, not pipelined (`num_stages` 1; ROWS 2 at fp32 512, as a ROWS x BLOCK_N
  tile, else 1): fp32 512-8192 and bf16 2048. Each program loads weight and bias itself;
- the persistent grid, sized as softmax.py's persistent launch is, from the compiled kernel's
  registers and shared memory through the occupancy calculator: each program keeps weight and
  bias in registers and walks rows `pid, pid + programs, ...`, its loop software-pipelined
  (`num_stages` 3-4) so the next rows' loads are in flight while one row is reduced: bf16 512,
  1024, 4096-16384 and fp32 16384, where it stays ahead, and for row lengths not measured (warps
  and stages by the rule in `launch_shape`).
Which launch wins at each size, with the figures: docs/kernels-performance.md, "Softmax and layer
norm: one program per ROWS rows".

What to look for in the IR:
- TTIR: the loads of weight and bias before the `scf.for` over rows; inside it one `tt.load` of
  x and two `tt.reduce` ops (the sum for the mean, the sum of squares for the variance); with
  ROWS > 1 the tensors are `ROWS x BLOCK_N` and the reductions run along axis 1.
- TTGIR: persistent launches (`num_stages` > 1): the row load becomes
  `ttg.async_copy_global_to_local` into a `ttg.local_alloc` with `num_stages - 1` buffers: that,
  plus a few bytes per warp for the cross-warp partial sums, is `metadata.shared`. One program per
  row (`num_stages` 1, as in the example, 4096 fp32 columns): no async copy, the row loaded
  straight into registers, `metadata.shared` only the partial sums.
- PTX: `ld.global.v4.b32` for weight and bias (and for the rows when not pipelined),
  `cp.async.cg.shared.global` for the rows when pipelined, `shfl.sync.bfly.b32` butterflies for
  the in-warp part of each reduction and `bar.sync` between the warps' partial sums,
  `rsqrt.approx.ftz.f32` for 1/sqrt(var + eps).
- SASS: no `LDL`/`STL` at any supported width.
"""

import torch
import triton
import triton.language as tl

from ._occupancy import resident_programs as resident

TITLE = "Layer norm (forward)"
KERNEL = "layer_norm_kernel"


@triton.jit
def layer_norm_kernel(
    x_ptr, w_ptr, b_ptr, out_ptr, stride_x, stride_out, M, N, eps,
    BLOCK_N: tl.constexpr, NUM_STAGES: tl.constexpr, ROWS: tl.constexpr = 1,
):
    if ROWS == 1:  # one row per loop step, as a 1-D block
        cols = tl.arange(0, BLOCK_N)
        mask = cols < N
        # Read once per program and kept in registers for all of its rows.
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        for row in tl.range(tl.program_id(0), M, tl.num_programs(0), num_stages=NUM_STAGES):
            row64 = tl.cast(row, tl.int64)  # row * stride can pass 2^31 on large tensors
            x = tl.load(x_ptr + row64 * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
            mean = tl.sum(x, axis=0) / N
            xc = tl.where(mask, x - mean, 0.0)
            var = tl.sum(xc * xc, axis=0) / N
            rstd = tl.rsqrt(var + eps)
            y = xc * rstd * w + b
            tl.store(out_ptr + row64 * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)
    else:  # ROWS rows per loop step, as a ROWS x BLOCK_N tile (short rows)
        cols = tl.arange(0, BLOCK_N)[None, :]
        mask = cols < N
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        for first in tl.range(tl.program_id(0) * ROWS, M, tl.num_programs(0) * ROWS, num_stages=NUM_STAGES):
            rows = first + tl.arange(0, ROWS)[:, None]
            # Rows past the end (the last block of ROWS) read the last row again and store nothing.
            rows64 = tl.cast(tl.minimum(rows, M - 1), tl.int64)  # row * stride can pass 2^31
            x = tl.load(x_ptr + rows64 * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
            mean = tl.sum(x, axis=1)[:, None] / N
            xc = tl.where(mask, x - mean, 0.0)
            var = tl.sum(xc * xc, axis=1)[:, None] / N
            rstd = tl.rsqrt(var + eps)
            y = xc * rstd * w + b
            tl.store(out_ptr + rows64 * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask & (rows < M))


# element size -> {BLOCK_N: (ROWS, num_warps, num_stages)}: the fastest launch of
# benchmarks/tune_h200_rows.py on the H200 at each row length of SIZES. num_stages 1: one program
# per ROWS rows, no pipelining; num_stages > 1: the persistent, pipelined grid.
MEASURED_SHAPES = {
    4: {512: (2, 2, 1), 1024: (1, 4, 1), 2048: (1, 8, 1), 4096: (1, 4, 1), 8192: (1, 8, 1), 16384: (1, 16, 3)},
    2: {512: (1, 1, 4), 1024: (1, 1, 4), 2048: (1, 4, 1), 4096: (1, 8, 4), 8192: (1, 16, 4), 16384: (1, 16, 3)},
}


def launch_shape(n_cols: int, element_size: int) -> tuple[int, int, int, int]:
    """(BLOCK_N, ROWS, num_warps, num_stages) for rows of n_cols values of element_size bytes."""
    block_n = triton.next_power_of_2(n_cols)
    row_bytes = block_n * element_size
    if row_bytes > 65536:
        raise ValueError(f"rows of {n_cols} values do not fit on chip; at most 64 KB per row")
    measured = MEASURED_SHAPES.get(element_size, {}).get(block_n)
    if measured:
        return (block_n, *measured)
    # Row lengths not measured: the persistent, pipelined launch. 16 values of the row
    # per thread, whatever the dtype (the row, weight and bias live in fp32 registers, about
    # 3 x 16 of them), up to 16 warps; prefetch at least two rows ahead, up to ~64 KB of them
    # (num_stages - 1 row buffers in shared memory).
    num_warps = min(max(block_n // (16 * 32), 1), 16)
    num_stages = min(max(65536 // row_bytes + 1, 3), 4)
    return block_n, 1, num_warps, num_stages


def launch_params(n_cols: int, element_size: int) -> tuple[int, int, int]:
    """(BLOCK_N, num_warps, num_stages) for rows of n_cols values of element_size bytes (ROWS:
    `launch_shape`)."""
    block_n, _, num_warps, num_stages = launch_shape(n_cols, element_size)
    return block_n, num_warps, num_stages


# (device index, dtype, BLOCK_N, ROWS, num_warps, num_stages) -> programs resident on the whole GPU.
_RESIDENT_PROGRAMS: dict[tuple, int] = {}


def resident_programs(x, weight, bias, out, block_n: int, num_warps: int, num_stages: int, rows: int = 1) -> int:
    """Programs of the compiled kernel that fit on x's GPU at once: SMs x blocks per SM, from the
    kernel's registers and shared memory (`_occupancy.py`, as Triton's fused-softmax tutorial counts them)."""
    key = (x.device.index, x.dtype, block_n, rows, num_warps, num_stages)
    if key not in _RESIDENT_PROGRAMS:
        compiled = layer_norm_kernel.warmup(
            x, weight, bias, out, x.stride(0), out.stride(0), x.shape[0], x.shape[1], 1e-5,
            BLOCK_N=block_n, NUM_STAGES=num_stages, ROWS=rows, num_warps=num_warps, grid=(1,),
        )
        compiled._init_handles()
        _RESIDENT_PROGRAMS[key] = resident(compiled, num_warps, x.device)
    return _RESIDENT_PROGRAMS[key]


def launch(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    out: torch.Tensor | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
) -> torch.Tensor:
    """Layer norm over the last dimension of a 2-D tensor whose rows are contiguous.

    num_warps / num_stages override `launch_shape` (for tuning sweeps); num_stages > 1 on a GPU
    launches the persistent, software-pipelined grid, num_stages 1 one program per ROWS rows."""
    M, N = x.shape
    assert x.stride(1) == 1, "rows must be contiguous"
    out = torch.empty_like(x) if out is None else out
    assert out.shape == x.shape and out.stride(1) == 1
    block_n, rows, default_warps, default_stages = launch_shape(N, x.element_size())
    num_warps, num_stages = num_warps or default_warps, num_stages or default_stages
    blocks = triton.cdiv(M, rows)
    if x.is_cuda and num_stages > 1:
        programs = min(resident_programs(x, weight, bias, out, block_n, num_warps, num_stages, rows), blocks)
    else:
        programs = blocks  # no pipelining, or no GPU to size for: one program per ROWS rows
    layer_norm_kernel[(programs,)](
        x, weight, bias, out, x.stride(0), out.stride(0), M, N, eps,
        BLOCK_N=block_n, NUM_STAGES=num_stages, ROWS=rows, num_warps=num_warps,
    )
    return out


# ---- the inspector's example call ----------------------------------------------------------
def example(device):
    """Normalise 4096 rows of 4096 fp32 values."""
    return launch(*make_inputs((4096, 4096), device))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [(16384, n) for n in (512, 1024, 2048, 4096, 8192, 16384)]  # (rows, columns)
TEST_SIZES = [(1, 1), (3, 100), (16, 512), (5, 1536)]
TOLERANCE = dict(atol=1e-4, rtol=1e-4)
SIZE_NAMES = ("rows", "columns")
VARIANTS = {"fp32": {"dtype": torch.float32}, "bf16": {"dtype": torch.bfloat16}}
VARIANT_TOLERANCE = {"bf16": dict(atol=3e-2, rtol=2e-2)}


def make_inputs(size: tuple[int, int], device, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    """x with a non-zero mean, and a random weight and bias."""
    M, N = size
    x = (2 * torch.randn(M, N, device=device) + 0.5).to(dtype)
    w = (1 + 0.5 * torch.randn(N, device=device)).to(dtype)
    b = (0.1 * torch.randn(N, device=device)).to(dtype)
    return x, w, b


def reference(x, weight, bias, eps: float = 1e-5) -> torch.Tensor:
    out = torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), weight.float(), bias.float(), eps)
    return out.to(x.dtype)


def baseline(x, weight, bias, eps: float = 1e-5) -> torch.Tensor:
    """What PyTorch code writes: the eager layer norm in the input's dtype."""
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def flops(size: tuple[int, int]) -> int:
    """Per element: sum, subtract, square-accumulate, scale by rstd, weight, bias (about 8)."""
    M, N = size
    return 8 * M * N


def bytes_moved(size: tuple[int, int], dtype: torch.dtype = torch.float32) -> int:
    """x read once, out written once, weight and bias read once."""
    M, N = size
    e = torch.empty((), dtype=dtype).element_size()
    return (2 * M * N + 2 * N) * e
