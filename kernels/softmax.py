"""Fused softmax over the rows of a matrix, each row kept on chip between its read and its write.

softmax(x)_ij = exp(x_ij - max_j x_ij) / sum_j exp(x_ij - max_j x_ij). The eager PyTorch way
reads and writes the matrix several times (max, subtract, exp, sum, divide); here every row is
read once and written once, with the max and the sum computed from registers.

The grid is persistent, as in Triton's fused-softmax tutorial: exactly as many programs as can be
resident on the GPU at once, each looping over rows `pid, pid + num_programs, ...`, with the loop
software-pipelined (`num_stages`) so the next rows' loads are in flight while one is reduced.
How many programs fit is not guessed: the kernel is compiled first (`warmup`), and its registers
(`n_regs`) and shared memory (`metadata.shared`) go through the inspector's occupancy calculator
(`inspector.occupancy.triton_occupancy`, the arithmetic of NVIDIA's `cuda_occupancy.h`), times
the SM count. Off a GPU (meta tensors for the inspector, CPU tensors for the interpreter) there is
no SM count to size for, and the launch falls back to one program per row: the same compiled
kernel, each program running its loop once. Rows of 32 KB (16384 bf16 or 8192 fp32 values) are not
pipelined (`num_stages` 1) and get one program per row on the GPU too: each program loads its row
straight into registers, two (bf16) or three (fp32) 16-warp programs are resident per SM, and the
hardware's block scheduler balances the rows (on an H200, bf16 16384 x 16384: 91.4-91.6 % of the
copy ceiling against 88.4-88.8 % for the persistent, pipelined launch; fp32 8192 columns 95.4 %
against 89.7 %; docs/kernels-performance.md).

What to look for in the IR:
- TTIR: an `scf.for` over rows whose step is `tt.get_num_programs`, with two `tt.reduce` ops
  (max, then sum) inside it.
- TTGIR (rows other than 32 KB, as in the example): the loop carries `tt.num_stages`; on sm_80
  and later the pipeliner turns the row load
  into `ttg.async_copy_global_to_local` into a multi-buffered `ttg.local_alloc`, which is where
  `metadata.shared` (and the occupancy limit it sets) comes from.
  With 32 KB rows (`num_stages` 1) there is no `ttg.async_copy_global_to_local`: plain
  `ld.global.v4.b32` loads into registers, and `metadata.shared` is only the reductions' scratch.
- PTX: `cp.async.cg.shared.global` (16-byte asynchronous copies) with `cp.async.wait_group`,
  `ex2.approx.ftz.f32` for exp (written as `tl.exp2`), a single `div.full.f32` per row (the
  reciprocal of the sum, then multiplies), `shfl.sync.bfly.b32` and `bar.sync` for the reductions.
"""

import torch
import triton
import triton.language as tl

TITLE = "Fused softmax (persistent grid)"
KERNEL = "softmax_kernel"


@triton.jit
def softmax_kernel(
    out_ptr, in_ptr, in_row_stride, out_row_stride, n_rows, n_cols, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr
):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in tl.range(row_start, n_rows, row_step, num_stages=NUM_STAGES):
        row64 = tl.cast(row, tl.int64)  # row * stride can pass 2^31 on large tensors
        x = tl.load(in_ptr + row64 * in_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
        # exp(v) = 2^(v log2 e): written as exp2, it becomes ex2.approx.ftz (tl.exp's ex2.approx
        # keeps denormals, a few more instructions per element; a result below 1e-38 is 0 either way
        # within the tolerance).
        num = tl.exp2((x - tl.max(x, axis=0)) * 1.4426950408889634)
        y = num * (1.0 / tl.sum(num, axis=0))
        tl.store(out_ptr + row64 * out_row_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


# (device index, dtype, BLOCK, num_warps, num_stages) -> programs resident on the whole GPU.
_RESIDENT_PROGRAMS: dict[tuple, int] = {}


def resident_programs(x: torch.Tensor, out: torch.Tensor, block: int, num_warps: int, num_stages: int) -> int:
    """How many programs of the compiled kernel fit on x's GPU at once (SMs x blocks per SM)."""
    key = (x.device.index, x.dtype, block, num_warps, num_stages)
    if key not in _RESIDENT_PROGRAMS:
        from inspector.occupancy import triton_occupancy

        compiled = softmax_kernel.warmup(
            out, x, x.stride(0), out.stride(0), x.shape[0], x.shape[1],
            BLOCK=block, NUM_STAGES=num_stages, num_warps=num_warps, grid=(1,),
        )
        compiled._init_handles()  # loads the binary: n_regs is known from here on
        target = triton.runtime.driver.active.get_current_target()
        per_sm = triton_occupancy(target, num_warps, compiled.n_regs, compiled.metadata.shared).blocks_per_sm
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        _RESIDENT_PROGRAMS[key] = max(per_sm, 1) * sms
    return _RESIDENT_PROGRAMS[key]


def launch_params(n_cols: int, element_size: int) -> tuple[int, int, int]:
    """(BLOCK, num_warps, num_stages) for rows of n_cols values of element_size bytes."""
    block = triton.next_power_of_2(n_cols)
    row_bytes = block * element_size
    if row_bytes > 65536:
        raise ValueError(f"rows of {n_cols} values do not fit on chip; at most 64 KB per row")
    # About 32 bytes of the row per thread: two 16-byte loads each, few registers.
    num_warps = min(max(row_bytes // 1024, 2), 16)
    # Prefetch up to ~64 KB of rows ahead (num_stages - 1 row buffers in shared memory).
    num_stages = min(max(65536 // row_bytes + 1, 2), 4)
    if row_bytes == 32768:
        # No pipelining, one program per row (`launch`): measured faster on the H200 (bf16 16384
        # columns 91.5 % of copy vs 88.6 %, fp32 8192 columns 95.4 % vs 89.7 %),
        # docs/kernels-performance.md.
        num_stages = 1
    return block, num_warps, num_stages


def launch(
    x: torch.Tensor, out: torch.Tensor | None = None, num_warps: int | None = None, num_stages: int | None = None
) -> torch.Tensor:
    """Row softmax of a 2-D tensor whose rows are contiguous.

    num_warps / num_stages override `launch_params` (for tuning sweeps)."""
    n_rows, n_cols = x.shape
    assert x.stride(1) == 1, "rows must be contiguous"
    out = torch.empty_like(x) if out is None else out
    assert out.shape == x.shape and out.stride(1) == 1
    block, default_warps, default_stages = launch_params(n_cols, x.element_size())
    num_warps, num_stages = num_warps or default_warps, num_stages or default_stages
    if x.is_cuda and num_stages > 1:
        programs = min(resident_programs(x, out, block, num_warps, num_stages), n_rows)
    else:
        # No GPU to size for, or no pipelining (nothing for a persistent loop to overlap): one
        # program per row, and the hardware schedules them as SMs free up.
        programs = n_rows
    softmax_kernel[(programs,)](
        out, x, x.stride(0), out.stride(0), n_rows, n_cols, BLOCK=block, NUM_STAGES=num_stages, num_warps=num_warps
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
