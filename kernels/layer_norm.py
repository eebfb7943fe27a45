"""Layer norm forward: out = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, over each row.

One program normalises one row, and the whole row stays in registers between the two
reductions (mean, then variance) and the normalisation, so x is read from memory exactly once.
Statistics are accumulated in fp32 whatever the storage type. Rows up to 64 KB (16384 fp32 or
32768 bf16 values) fit; the number of warps grows with the row so each thread holds at most
16 to 32 values.

What to look for in the IR:
- TTIR: two `tt.reduce` ops (the sum for the mean, the sum of squares for the variance) over the
  one loaded row, and no second `tt.load` of x.
- TTGIR: the reductions of a row spread over several warps need shared memory: `metadata.shared`
  is a few bytes per warp (the partial sums), not the row.
- PTX: `ld.global.v4.b32` for x, weight and bias; `shfl.sync.bfly.b32` butterflies for the
  in-warp part of each reduction, and `bar.sync` between the warps' partial sums;
  `rsqrt.approx.ftz.f32` for 1/sqrt(var + eps).
- SASS: no `LDL`/`STL` at any supported width: the row fits in registers.
"""

import torch
import triton
import triton.language as tl

TITLE = "Layer norm (forward)"
KERNEL = "layer_norm_kernel"


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, stride_x, stride_out, N, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # row * stride can pass 2^31 on large tensors
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / N
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / N
    rstd = tl.rsqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    y = xc * rstd * w + b
    tl.store(out_ptr + row * stride_out + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def launch(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor,
    eps: float = 1e-5,
    out: torch.Tensor | None = None,
) -> torch.Tensor:
    """Layer norm over the last dimension of a 2-D tensor whose rows are contiguous."""
    M, N = x.shape
    assert x.stride(1) == 1, "rows must be contiguous"
    block_n = triton.next_power_of_2(N)
    if block_n * x.element_size() > 65536:
        raise ValueError(f"rows of {N} values do not fit in registers; at most 64 KB per row")
    out = torch.empty_like(x) if out is None else out
    # 16 values of 4 bytes (or 32 of 2) per thread: enough bytes in flight, few registers.
    num_warps = min(max(block_n * x.element_size() // (64 * 32), 1), 16)
    layer_norm_kernel[(M,)](
        x, weight, bias, out, x.stride(0), out.stride(0), N, eps, BLOCK_N=block_n, num_warps=num_warps
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
