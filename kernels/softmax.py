"""Fused softmax over the rows of a matrix, each row kept on chip between its read and its write.

softmax(x)_ij = exp(x_ij - max_j x_ij) / sum_j exp(x_ij - max_j x_ij). The eager PyTorch way
reads and writes the matrix several times (max, subtract, exp, sum, divide); here every row is
read once and written once, with the max and the sum computed from registers.

Each program owns ROWS consecutive rows (one for rows of 1024 values or more; two or four for
shorter rows, as a ROWS x BLOCK tile, as inductor does), and there is one program per ROWS rows:
the hardware's block scheduler balances them as SMs free up. `launch_shape` takes (ROWS, num_warps)
from `MEASURED_SHAPES`, the fastest of benchmarks/tune_h200_rows.py on an H200 at each row length of
SIZES (about 16 values per thread; a rule of that shape for row lengths not measured).

Triton's fused-softmax tutorial launches a persistent grid instead (as many programs as fit on the
GPU, each looping over rows with the loop software-pipelined); that launch is here too
(`launch(..., num_stages=2..4)`, `resident_programs`), for comparison. Why one program per ROWS
rows is the default, with the figures of both: docs/kernels-performance.md, "Softmax and layer
norm: one program per ROWS rows".
Off a GPU (meta tensors for the inspector, CPU tensors for the interpreter) the launch is the same.

What to look for in the IR:
- TTIR: an `scf.for` over rows whose step is `tt.get_num_programs` (a single trip with the default
  grid), with two `tt.reduce` ops (max, then sum) inside it; with ROWS > 1 the tensors are
  `ROWS x BLOCK` and the reductions run along axis 1.
- TTGIR: with the default launch (`num_stages` 1) no `ttg.async_copy_global_to_local`: the row goes
  straight from global memory into registers, and `metadata.shared` is only the reductions'
  scratch. With `num_stages` > 1 (persistent launch) the pipeliner turns the row load into
  `ttg.async_copy_global_to_local` into a multi-buffered `ttg.local_alloc` on sm_80 and later.
- PTX: `ld.global.v4.b32` loads (`cp.async.cg.shared.global` with `cp.async.wait_group` only when
  pipelined), `ex2.approx.ftz.f32` for exp (written as `tl.exp2`), a single `div.full.f32` per
  row (the reciprocal of the sum, then multiplies), `shfl.sync.bfly.b32` for the reductions and
  `bar.sync` where a row spans several warps.
"""

import torch
import triton
import triton.language as tl

from ._occupancy import resident_programs as resident

TITLE = "Fused softmax"
KERNEL = "softmax_kernel"


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


# (device index, dtype, BLOCK, ROWS, num_warps, num_stages) -> programs resident on the whole GPU.
_RESIDENT_PROGRAMS: dict[tuple, int] = {}


def resident_programs(
    x: torch.Tensor, out: torch.Tensor, block: int, num_warps: int, num_stages: int, rows: int = 1
) -> int:
    """How many programs of the compiled kernel fit on x's GPU at once (SMs x blocks per SM)."""
    key = (x.device.index, x.dtype, block, rows, num_warps, num_stages)
    if key not in _RESIDENT_PROGRAMS:
        compiled = softmax_kernel.warmup(
            out, x, x.stride(0), out.stride(0), x.shape[0], x.shape[1],
            BLOCK=block, NUM_STAGES=num_stages, ROWS=rows, num_warps=num_warps, grid=(1,),
        )
        compiled._init_handles()  # loads the binary: n_regs is known from here on
        _RESIDENT_PROGRAMS[key] = resident(compiled, num_warps, x.device)
    return _RESIDENT_PROGRAMS[key]


# element size -> {BLOCK: (ROWS, num_warps)}: the fastest launch of benchmarks/tune_h200_rows.py
# on the H200 at each row length of SIZES (one program per ROWS rows, no pipelining).
MEASURED_SHAPES = {
    4: {256: (4, 2), 512: (2, 1), 1024: (1, 2), 2048: (1, 4), 4096: (1, 16), 8192: (1, 16), 16384: (1, 16)},
    2: {256: (4, 4), 512: (2, 2), 1024: (1, 2), 2048: (1, 4), 4096: (1, 8), 8192: (1, 16), 16384: (1, 16)},
}


def launch_shape(n_cols: int, element_size: int) -> tuple[int, int, int, int]:
    """(BLOCK, ROWS, num_warps, num_stages) for rows of n_cols values of element_size bytes."""
    block = triton.next_power_of_2(n_cols)
    if block * element_size > 65536:
        raise ValueError(f"rows of {n_cols} values do not fit on chip; at most 64 KB per row")
    measured = MEASURED_SHAPES.get(element_size, {}).get(block)
    if measured:
        rows, num_warps = measured
    else:
        # Row lengths not measured: a tile of at least 1024 values (several short rows), about 16
        # values per thread, up to 16 warps: the rule the measured shapes mostly follow.
        rows = min(max(1024 // block, 1), 16)
        num_warps = min(max(rows * block // 512, 1), 16)
    # No pipelining (num_stages 1): one program per ROWS rows, the hardware's block scheduler
    # balancing them, beat the persistent, pipelined grid at nearly every size measured, and one
    # launch rule for every size is worth the near-tie where it did not
    # (docs/kernels-performance.md, "Softmax and layer norm: one program per ROWS rows").
    return block, rows, num_warps, 1


def launch_params(n_cols: int, element_size: int) -> tuple[int, int, int]:
    """(BLOCK, num_warps, num_stages) for rows of n_cols values of element_size bytes (ROWS:
    `launch_shape`)."""
    block, _, num_warps, num_stages = launch_shape(n_cols, element_size)
    return block, num_warps, num_stages


def launch(
    x: torch.Tensor, out: torch.Tensor | None = None, num_warps: int | None = None, num_stages: int | None = None
) -> torch.Tensor:
    """Row softmax of a 2-D tensor whose rows are contiguous.

    num_warps / num_stages override `launch_shape` (for tuning sweeps); num_stages > 1 on a GPU
    launches the persistent, software-pipelined grid."""
    n_rows, n_cols = x.shape
    assert x.stride(1) == 1, "rows must be contiguous"
    out = torch.empty_like(x) if out is None else out
    assert out.shape == x.shape and out.stride(1) == 1
    block, rows, default_warps, default_stages = launch_shape(n_cols, x.element_size())
    num_warps, num_stages = num_warps or default_warps, num_stages or default_stages
    blocks = triton.cdiv(n_rows, rows)
    if x.is_cuda and num_stages > 1:
        programs = min(resident_programs(x, out, block, num_warps, num_stages, rows), blocks)
    else:
        # No pipelining (nothing for a persistent loop to overlap), or no GPU to size for: one
        # program per ROWS rows, and the hardware schedules them as SMs free up.
        programs = blocks
    softmax_kernel[(programs,)](
        out, x, x.stride(0), out.stride(0), n_rows, n_cols,
        BLOCK=block, NUM_STAGES=num_stages, ROWS=rows, num_warps=num_warps,
    )
    return out


# ---- the inspector's example call ----------------------------------------------------------
def example(device):
    """Softmax of 4096 rows of 2048 fp32 values."""
    return launch(*make_inputs((4096, 2048), device))


# ---- bundled-kernel protocol ---------------------------------------------------------------
SIZES = [(16384, n) for n in (256, 512, 1024, 2048, 4096, 8192, 16384)]  # (rows, columns)
TEST_SIZES = [(1, 1), (3, 100), (16, 512), (5, 1536)]
TOLERANCE = dict(atol=1e-6, rtol=1e-5)
SIZE_NAMES = ("rows", "columns")
VARIANTS = {"fp32": {"dtype": torch.float32}, "bf16": {"dtype": torch.bfloat16}}
VARIANT_TOLERANCE = {"bf16": dict(atol=1e-3, rtol=1e-2)}


def make_inputs(size: tuple[int, int], device, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, ...]:
    """Random logits with a spread of a few units, as attention scores have."""
    M, N = size
    return ((3 * torch.randn(M, N, device=device)).to(dtype),)


def reference(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def baseline(x: torch.Tensor) -> torch.Tensor:
    """What PyTorch code writes: the eager softmax in the input's dtype."""
    return torch.softmax(x, dim=-1)


def flops(size: tuple[int, int]) -> int:
    """Per element: max, subtract, exp, sum, multiply (five)."""
    M, N = size
    return 5 * M * N


def bytes_moved(size: tuple[int, int], dtype: torch.dtype = torch.float32) -> int:
    """The matrix read once and written once."""
    M, N = size
    return 2 * M * N * torch.empty((), dtype=dtype).element_size()
